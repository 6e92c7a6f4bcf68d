// A function's own credential (x-plinth-function-token): a real Deno function gets a short-lived
// token with role "function" on each call; POST /api/email/send-raw takes it and sends through
// a real SMTP server (smtp-server on loopback); every other route refuses it, and a forged or
// tampered one is a 401.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { until } from '../helpers/until.js';
import { startSmtp } from '../auth/smtp.js';
import { ECHO, json } from '../functions/helpers.js';

describe.each(backends())('a function sends email with its own token (%s)', (backend) => {
  let t: TestApp;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let token: string;
  const send = (auth: string, to = 'fn@example.com') =>
    call(t, 'POST', '/api/email/send-raw', {
      headers: { authorization: `Bearer ${auth}` },
      body: { to, subject: 'From a function', text: 'daily digest' },
    });

  beforeAll(async () => {
    smtp = await startSmtp();
    t = await startApp(backend, { SMTP_URL: smtp.url, MAIL_FROM: 'App <app@example.com>', EMAIL_PER_MINUTE: '3' });
    const admin = { 'x-api-key': t.adminKey };
    expect(
      (
        await call(t, 'POST', '/api/functions', {
          headers: admin,
          body: { name: 'Mailer', slug: 'mailer', code: ECHO },
        })
      ).status,
    ).toBe(201);
    const seen = await json(
      await t.fetch('/functions/mailer', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-plinth-function-token': 'spoofed' },
        body: '{}',
      }),
    );
    token = seen.headers['x-plinth-function-token'];
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('the runtime hands the function a short-lived token with role "function" and its slug', () => {
    expect(token).not.toBe('spoofed');
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
    expect(claims).toMatchObject({ role: 'function', sub: 'function:mailer', iss: 'plinth' });
    expect(claims.exp - claims.iat).toBeLessThanOrEqual(600);
  });

  it('POST /api/email/send-raw takes it and the mail reaches the SMTP server; limited per function', async () => {
    const r = await send(token);
    expect([r.status, r.body]).toEqual([200, {}]);
    await until(async () => smtp.count('fn@example.com') === 1, 10_000, 'the mail');
    expect(smtp.mails.at(-1)!.raw).toMatch(/Subject: From a function/);
    await send(token);
    await send(token);
    const limited = await send(token);
    expect([limited.status, limited.body.error]).toEqual([429, 'RATE_LIMITED']);
  });

  it('every other route refuses it (403), and a tampered token is a 401', async () => {
    for (const [method, path] of [
      ['GET', '/api/functions'],
      ['GET', '/api/database/records/anything'],
      ['GET', '/api/auth/sessions/current'],
      ['GET', '/api/email/templates'],
    ] as const) {
      const r = await call(t, method, path, { token });
      expect([r.status, r.body.error], path).toEqual([403, 'FORBIDDEN']);
      expect(r.body.nextActions).toEqual(expect.any(String));
    }
    const [h, p, s] = token.split('.');
    const forged = JSON.parse(Buffer.from(p!, 'base64url').toString('utf8'));
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...forged, sub: 'function:other' })).toString('base64url')}.${s}`;
    const r = await send(tampered);
    expect([r.status, r.body.error]).toEqual([401, 'INVALID_TOKEN']);
  });
});
