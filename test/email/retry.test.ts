// Mail that survives an SMTP outage (issue #40): a real smtp-server that is down, then comes
// back; the mail is retried with back-off (short settings here: EMAIL_RETRY_DELAY_SECONDS=1,
// EMAIL_MAX_ATTEMPTS=3), then marked failed where the admin API, MCP and the log see it
// ("gave up" at error level on stdout at LOG_LEVEL=warn), and resent. Sign-in mails are listed
// without their codes and not kept once sent.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { backends } from '../helpers/db.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { mcpClient } from '../mcp/helpers.js';
import { type Smtp, smtpServer } from '../helpers/smtp.js';

describe.each(backends())('queued mail through an SMTP outage (%s)', (backend) => {
  let t: TestApp;
  let smtp: Smtp;
  const lines: string[] = [];
  const admin = () => ({ 'x-api-key': t.adminKey });
  const list = async (status?: string) =>
    (await call(t, 'GET', `/api/email/messages${status ? `?status=${status}` : ''}`, { headers: admin() })).body;
  const byId = async (id: string) => (await list()).find((m: { id: string }) => m.id === id);
  const send = async (subject: string) => {
    const r = await call(t, 'POST', '/api/email/send-raw', {
      headers: admin(),
      body: { to: `${subject}@example.com`, subject, text: 'hello' },
    });
    expect([r.status, r.body]).toEqual([200, {}]);
    const m = (await list()).find((x: { subject: string }) => x.subject === subject);
    expect(m).toBeDefined();
    return m.id as string;
  };

  beforeAll(async () => {
    smtp = await smtpServer();
    const port = smtp.port;
    // The "gave up" line is written to stdout by the server's own writer (not the log store).
    const write = process.stdout.write.bind(process.stdout);
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
      lines.push(String(chunk));
      return write(chunk as never, ...(rest as []));
    });
    t = await startApp(backend, {
      SMTP_URL: `smtp://127.0.0.1:${port}`,
      MAIL_FROM: 'App <app@example.com>',
      LOG_LEVEL: 'warn',
      EMAIL_MAX_ATTEMPTS: '3',
      EMAIL_RETRY_DELAY_SECONDS: '1',
      REQUIRE_EMAIL_VERIFICATION: 'true',
      EMAIL_PER_MINUTE: '100',
    });
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await t?.close();
    await smtp?.down();
  });

  it('keeps mail queued and retried while SMTP is down, and delivers it when it comes back', async () => {
    const ids = [await send('outage-a'), await send('outage-b'), await send('outage-c')];
    // Two attempts each have failed: the old queue had dropped mail after 4 tries in 60 s.
    await expect
      .poll(async () => Math.min(...(await Promise.all(ids.map(async (id) => (await byId(id)).attempts)))), {
        timeout: 20_000,
        interval: 200,
      })
      .toBeGreaterThanOrEqual(2);
    const queued = await byId(ids[0]!);
    expect(queued).toMatchObject({
      status: 'queued',
      kind: 'raw',
      caller: 'admin',
      to: ['outage-a@example.com'],
      lastError: expect.stringMatching(/ECONNREFUSED/),
      resendable: true,
    });
    await smtp.up();
    await expect
      .poll(async () => (await Promise.all(ids.map(byId))).map((m) => m.status), { timeout: 30_000, interval: 200 })
      .toEqual(['sent', 'sent', 'sent']);
    expect(smtp.got.map((g) => g.to[0]).sort()).toEqual([
      'outage-a@example.com',
      'outage-b@example.com',
      'outage-c@example.com',
    ]);
    const sent = await byId(ids[0]!);
    expect(sent).toMatchObject({ status: 'sent', lastError: null, resendable: false, sentAt: expect.any(String) });
    expect(sent.attempts).toBeGreaterThanOrEqual(3);
    // Sent: its content is not kept.
    const held = await t.deps.db.query<{ n: number }>(
      `select count(*)::int as n from email.messages where id = any($1) and mail is not null`,
      [ids],
    );
    expect(held.rows[0]!.n).toBe(0);
  }, 60_000);

  it('marks mail failed after the last attempt, says so on stdout at error level, and resends it (API and MCP)', async () => {
    await smtp.down();
    const before = lines.length;
    const id = await send('gives-up');
    await expect.poll(async () => (await byId(id)).status, { timeout: 30_000, interval: 200 }).toBe('failed');
    const failed = await byId(id);
    expect(failed).toMatchObject({
      attempts: 3,
      resendable: true,
      failedAt: expect.any(String),
      lastError: expect.stringMatching(/ECONNREFUSED/),
    });
    expect((await list('failed')).map((m: { id: string }) => m.id)).toContain(id);
    expect((await list('queued')).map((m: { id: string }) => m.id)).not.toContain(id);
    const gaveUp = lines
      .slice(before)
      .map((l) => JSON.parse(l))
      .find((l) => l.msg === 'email: gave up on a mail' && l.messageId === id);
    expect(gaveUp).toMatchObject({ level: 50, attempt: 3 });
    // Resent through MCP once SMTP is back: a fresh set of attempts, delivered.
    await smtp.up();
    const mcp = await mcpClient(t);
    try {
      const listed = await mcp.text('list-emails', { status: 'failed' });
      expect(listed.text).toContain(id);
      const resent = await mcp.text('resend-email', { id });
      expect(resent.isError).toBe(false);
    } finally {
      await mcp.close();
    }
    await expect.poll(async () => (await byId(id)).status, { timeout: 20_000, interval: 200 }).toBe('sent');
    expect(smtp.got.some((g) => g.to[0] === 'gives-up@example.com')).toBe(true);
    // Sent mail cannot be resent (its content is gone); unknown ids and bad filters are envelopes.
    const again = await call(t, 'POST', `/api/email/messages/${id}/resend`, { headers: admin() });
    expect([again.status, again.body.error]).toEqual([409, 'EMAIL_NOT_RESENDABLE']);
    const unknown = await call(t, 'POST', '/api/email/messages/00000000-0000-4000-8000-000000000000/resend', {
      headers: admin(),
    });
    expect([unknown.status, unknown.body.error]).toEqual([404, 'EMAIL_MESSAGE_NOT_FOUND']);
    const bad = await call(t, 'GET', '/api/email/messages?status=lost', { headers: admin() });
    expect([bad.status, bad.body.error]).toEqual([400, 'INVALID_INPUT']);
    expect((await call(t, 'GET', '/api/email/messages', { headers: { apikey: t.anonKey } })).status).toBe(403);
  }, 60_000);

  it('gives up on a mail whose last attempt was cut short (Plinth killed during it), at error level, resendable', async () => {
    // What a kill -9 during the last attempt leaves: every attempt spent, still queued, and no
    // job left to end it. The sweep (every 10 minutes, run here at once) ends it.
    const { rows } = await t.deps.db.query<{ id: string }>(
      `insert into email.messages (kind, caller, recipients, subject, mail, attempts, last_attempt_at)
       values ('raw', 'admin', array['cut@example.com'], 'cut', $1, 3, now() - interval '11 minutes') returning id`,
      [JSON.stringify({ to: 'cut@example.com', subject: 'cut', text: 'hello' })],
    );
    const id = rows[0]!.id;
    const recent = await t.deps.db.query<{ id: string }>(
      `insert into email.messages (kind, caller, recipients, subject, mail, attempts, last_attempt_at)
       values ('raw', 'admin', array['busy@example.com'], 'busy', $1, 3, now() - interval '1 minute') returning id`,
      [JSON.stringify({ to: 'busy@example.com', subject: 'busy', text: 'hello' })],
    );
    const before = lines.length;
    await t.deps.jobs!.send('email-retention', {});
    await expect.poll(async () => (await byId(id)).status, { timeout: 20_000, interval: 200 }).toBe('failed');
    expect(await byId(id)).toMatchObject({
      attempts: 3,
      resendable: true,
      lastError: expect.stringMatching(/cut short/),
    });
    // An attempt begun a minute ago may still be running: left alone.
    expect((await byId(recent.rows[0]!.id)).status).toBe('queued');
    const gaveUp = lines
      .slice(before)
      .map((l) => JSON.parse(l))
      .find((l) => l.msg === 'email: gave up on a mail' && l.messageId === id);
    expect(gaveUp).toMatchObject({ level: 50, attempt: 3 });
    await t.deps.db.query('delete from email.messages where id = $1', [recent.rows[0]!.id]);
  }, 60_000);

  it('lists a sign-up mail without its code, and keeps its content only until it is sent', async () => {
    await smtp.down();
    const email = `masked-${Date.now()}@example.com`;
    const r = await call(t, 'POST', '/api/auth/users', {
      headers: { apikey: t.anonKey },
      body: { email, password: 'pw-123456A!' },
    });
    expect(r.status).toBeLessThan(300);
    await expect
      .poll(async () => (await list()).find((m: { to: string[] }) => m.to.includes(email))?.attempts ?? 0, {
        timeout: 20_000,
        interval: 200,
      })
      .toBeGreaterThanOrEqual(1);
    const m = (await list()).find((x: { to: string[] }) => x.to.includes(email));
    expect(m).toMatchObject({ kind: 'auth', caller: 'auth', status: 'queued', expiresAt: expect.any(String) });
    const body = JSON.stringify(await list());
    expect(m.subject).toMatch(/••••••/);
    const held = await t.deps.db.query<{ mail: { subject: string } }>('select mail from email.messages where id = $1', [
      m.id,
    ]);
    const code = /(\d{6})/.exec(held.rows[0]!.mail.subject)![1]!;
    expect(body).not.toContain(code);
    await smtp.up();
    await expect.poll(async () => (await byId(m.id)).status, { timeout: 20_000, interval: 200 }).toBe('sent');
    expect(smtp.got.find((g) => g.to.includes(email))!.raw).toContain(code);
    const after = await t.deps.db.query<{ mail: unknown }>('select mail from email.messages where id = $1', [m.id]);
    expect(after.rows[0]!.mail).toBeNull();
  }, 60_000);
});
