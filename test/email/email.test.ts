// The email API against a real SMTP server (smtp-server on loopback): InsForge's send-raw shape,
// who may send, the recipient bound, per-caller limits, production without SMTP, and the
// editable auth templates with their preview, used by the real sign-up mail.
import { createServer as createNetServer } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { until } from '../helpers/until.js';
import { startSmtp } from '../auth/smtp.js';

describe.each(backends())('email API (%s)', (backend) => {
  let t: TestApp;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  const admin = () => ({ 'x-api-key': t.adminKey });
  const send = (body: unknown, headers: Record<string, string> = admin()) =>
    call(t, 'POST', '/api/email/send-raw', { headers, body });

  beforeAll(async () => {
    smtp = await startSmtp();
    t = await startApp(backend, {
      SMTP_URL: smtp.url,
      MAIL_FROM: 'App <app@example.com>',
      EMAIL_PER_MINUTE: '5',
      REQUIRE_EMAIL_VERIFICATION: 'true',
    });
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it("sends InsForge's shape through SMTP: to, cc, bcc, html, from name, replyTo; answers {}", async () => {
    const r = await send({
      to: ['a@example.com', 'b@example.com'],
      cc: ['c@example.com'],
      bcc: ['d@example.com'],
      subject: 'Daily news',
      html: '<p>Hello <b>there</b></p>',
      from: 'News Bot',
      replyTo: 'reply@example.com',
    });
    expect([r.status, r.body]).toEqual([200, {}]);
    await until(async () => smtp.count('d@example.com') === 1, 5000, 'the mail');
    const raw = smtp.mails.at(-1)!.raw;
    expect(smtp.mails.at(-1)!.to.sort()).toEqual(['a@example.com', 'b@example.com', 'c@example.com', 'd@example.com']);
    expect(raw).toMatch(/Subject: Daily news/);
    expect(raw).toMatch(/From: "?News Bot"? <app@example.com>/);
    expect(raw).toMatch(/Reply-To: reply@example.com/);
    expect(raw).toMatch(/<b>there<\/b>/);
    expect(raw).not.toMatch(/^Bcc:/m);
  });

  it('refuses bad input and callers who may not send, with the envelope', async () => {
    const many = Array.from({ length: 51 }, (_, i) => `r${i}@example.com`);
    const cases: Array<[unknown, Record<string, string> | undefined, number, string]> = [
      [{ to: many, subject: 's', text: 't' }, undefined, 400, 'INVALID_INPUT'],
      [{ to: many.slice(0, 30), cc: many.slice(30), subject: 's', text: 't' }, undefined, 400, 'INVALID_INPUT'],
      [{ to: 'not-an-email', subject: 's', text: 't' }, undefined, 400, 'INVALID_INPUT'],
      [{ to: 'a@example.com', subject: 's' }, undefined, 400, 'INVALID_INPUT'],
      [{ to: 'a@example.com', subject: 's', text: 't', attachments: [] }, undefined, 400, 'INVALID_INPUT'],
      [{ to: 'a@example.com', subject: 's', text: 't' }, { apikey: '' }, 401, 'UNAUTHORIZED'],
    ];
    for (const [body, headers, status, error] of cases) {
      const r = await send(body, headers?.apikey === '' ? {} : headers);
      expect([r.status, r.body.error], JSON.stringify(body).slice(0, 80)).toEqual([status, error]);
      expect(r.body.nextActions).toEqual(expect.any(String));
    }
    const anon = await send({ to: 'a@example.com', subject: 's', text: 't' }, { apikey: t.anonKey });
    expect(anon.status).toBe(403);
    const user = await createTestUser(t);
    const u = await send({ to: 'a@example.com', subject: 's', text: 't' }, user.auth);
    expect([u.status, u.body.error]).toEqual([403, 'EMAIL_NOT_ALLOWED']);
  });

  it('limits each caller per minute (EMAIL_PER_MINUTE)', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await send({ to: 'limit@example.com', subject: `n${i}`, text: 't' })).status);
    // One admin mail went out in the first test already.
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(2);
    expect(statuses.slice(0, 4)).toEqual([200, 200, 200, 200]);
  });

  it('edits the verification template, previews it, and the sign-up mail uses it', async () => {
    const list = (await call(t, 'GET', '/api/email/templates', { headers: admin() })).body;
    expect(list.map((x: any) => x.key)).toEqual(['verification', 'reset-password', 'magic-link']);
    expect(list[0]).toMatchObject({ custom: false, subject: expect.stringContaining('{{code}}') });
    const put = await call(t, 'PUT', '/api/email/templates/verification', {
      headers: admin(),
      body: { subject: 'Welcome! Code {{code}}', text: 'Code {{code}} for {{email}}', html: '<p>{{email}}</p>' },
    });
    expect(put.body).toMatchObject({ custom: true, subject: 'Welcome! Code {{code}}' });
    const preview = await call(t, 'POST', '/api/email/templates/verification/preview', {
      headers: admin(),
      body: { values: { email: '<x@example.com>' } },
    });
    expect(preview.body).toEqual({
      subject: 'Welcome! Code 123456',
      text: 'Code 123456 for <x@example.com>',
      html: '<p>&lt;x@example.com&gt;</p>',
    });
    expect((await call(t, 'GET', '/api/email/templates/nope', { headers: admin() })).body.error).toBe(
      'TEMPLATE_NOT_FOUND',
    );
    const email = `new-${Date.now()}@example.com`;
    expect(
      (
        await call(t, 'POST', '/api/auth/users', {
          headers: { apikey: t.anonKey },
          body: { email, password: 'pw-123456A!' },
        })
      ).status,
    ).toBeLessThan(300);
    await until(async () => smtp.count(email) === 1, 5000, 'the sign-up mail');
    expect(smtp.mails.find((m) => m.to.includes(email))!.raw).toMatch(/Subject: Welcome! Code \d{6}/);
    expect((await call(t, 'DELETE', '/api/email/templates/verification', { headers: admin() })).body.custom).toBe(
      false,
    );
  });
});

describe('email API in production without SMTP_URL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp('embedded', { NODE_ENV: 'production' });
  });
  afterAll(async () => t?.close());

  it('answers 503 saying what to configure', async () => {
    const r = await call(t, 'POST', '/api/email/send-raw', {
      headers: { 'x-api-key': t.adminKey },
      body: { to: 'a@example.com', subject: 's', text: 't' },
    });
    expect([r.status, r.body.error]).toEqual([503, 'EMAIL_NOT_CONFIGURED']);
    expect(r.body.nextActions).toMatch(/SMTP_URL/);
  });
});

describe('email API when the SMTP server is down at first', () => {
  let t: TestApp;
  let port = 0;
  beforeAll(async () => {
    const probe = createNetServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    port = (probe.address() as { port: number }).port;
    await new Promise((r) => probe.close(r));
    t = await startApp('embedded', {
      SMTP_URL: `smtp://127.0.0.1:${port}`,
      REQUIRE_EMAIL_VERIFICATION: 'true',
      // Short retries for the test (the default first delay is 30 s).
      EMAIL_RETRY_DELAY_SECONDS: '1',
    });
  });
  afterAll(async () => t?.close());

  it('answers at once and delivers once the server is up (the send is a retried job), auth emails too', async () => {
    const r = await call(t, 'POST', '/api/email/send-raw', {
      headers: { 'x-api-key': t.adminKey },
      body: { to: 'late@example.com', subject: 'late', text: 't' },
    });
    expect([r.status, r.body]).toEqual([200, {}]);
    // The sign-up's verification mail is a job of the same queue: not lost while SMTP is down.
    const signUp = await call(t, 'POST', '/api/auth/users', {
      headers: { apikey: t.anonKey },
      body: { email: 'late-user@example.com', password: 'pw-123456A!' },
    });
    expect(signUp.status).toBeLessThan(300);
    // The mail is queued right after the answer (the sign-up does not wait on the mailer).
    const queuedCount = async () =>
      (
        await t.deps.db.query<{ n: number }>(
          `select count(*)::int as n from email.messages m join pgboss.job j on j.name = 'email-send' and j.data->>'messageId' = m.id::text
            where 'late-user@example.com' = any(m.recipients)`,
        )
      ).rows[0]!.n;
    await until(async () => (await queuedCount()) > 0, 10_000, 'the verification mail queued');
    expect(await queuedCount()).toBe(1);
    await new Promise((res) => setTimeout(res, 1500));
    const got: string[] = [];
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData(stream, session, callback) {
        stream.on('data', () => {});
        stream.on('end', () => {
          got.push(...session.envelope.rcptTo.map((x) => x.address));
          callback();
        });
      },
    });
    await new Promise<void>((res) => server.listen(port, '127.0.0.1', res));
    try {
      await until(
        async () => got.includes('late@example.com') && got.includes('late-user@example.com'),
        30_000,
        'the retried sends',
      );
    } finally {
      await new Promise<void>((res) => server.close(() => res()));
    }
  }, 60_000);
});
