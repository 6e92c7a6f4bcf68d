import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { startSmtp } from './smtp.js';
import { call } from '../helpers/http.js';
import { USER_SHAPE, expectError, uniqueEmail } from './util.js';

describe.each(backends())('email verification and password reset (%s)', (backend) => {
  let t: TestApp;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  beforeAll(async () => {
    smtp = await startSmtp();
    t = await startApp(backend, {
      REQUIRE_EMAIL_VERIFICATION: 'true',
      SMTP_URL: smtp.url,
      MAIL_FROM: 'Plinth <auth@plinth.test>',
    });
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  const post = (path: string, body: unknown, token?: string) => call(t, 'POST', path, { body, token });
  const signin = (email: string, password: string) => post('/api/auth/signin', { email, password });

  async function signupUnverified(email = uniqueEmail('v')) {
    const a = await post('/api/auth/signup', { email, password: 'password-1', name: 'V' });
    expect(a.status).toBe(200);
    return { email, user: a.body.user, code: await smtp.waitForCode(email) };
  }

  it('sign-up returns no token and sends a 6-digit code; sign-in before verifying is 403 EMAIL_NOT_VERIFIED', async () => {
    const email = uniqueEmail('v');
    const a = await post('/api/auth/signup', { email, password: 'password-1' });
    expect(a.status).toBe(200);
    expect(a.body).toEqual({
      user: { ...USER_SHAPE, email, emailVerified: false },
      accessToken: null,
      refreshToken: null,
      requireEmailVerification: true,
    });
    const code = await smtp.waitForCode(email);
    expect(code).toMatch(/^\d{6}$/);
    const mail = smtp.mails.find((m) => m.to.includes(email))!;
    expect(mail.raw).toMatch(/^From: Plinth <auth@plinth\.test>/m);
    expectError(await signin(email, 'password-1'), 403, 'EMAIL_NOT_VERIFIED');
    // A wrong password is still 401: verification status is not revealed to a guesser.
    expectError(await signin(email, 'password-2'), 401, 'INVALID_CREDENTIALS');
  });

  it('the right code verifies the email and signs in; then sign-in works; the code works once', async () => {
    const { email, code } = await signupUnverified();
    const v = await post('/api/auth/email/verify', { email: email.toUpperCase(), code });
    expect(v.status).toBe(200);
    expect(Object.keys(v.body).sort()).toEqual(['accessToken', 'refreshToken', 'user']);
    expect(v.body.user).toMatchObject({ email, emailVerified: true });
    expect((await call(t, 'GET', '/api/auth/user', { token: v.body.accessToken })).body.user.emailVerified).toBe(true);
    const s = await signin(email, 'password-1');
    expect(s.status).toBe(200);
    expect(s.body.user.emailVerified).toBe(true);
    expectError(await post('/api/auth/email/verify', { email, code }), 400, 'INVALID_CODE');
  });

  it('a wrong code is 400 INVALID_CODE; after 5 tries even the right code is refused', async () => {
    const { email, code } = await signupUnverified();
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++)
      expectError(await post('/api/auth/email/verify', { email, code: wrong }), 400, 'INVALID_CODE');
    expectError(await post('/api/auth/email/verify', { email, code }), 400, 'INVALID_CODE');
    // A resent code starts over.
    expect((await post('/api/auth/email/send-verification', { email })).status).toBe(200);
    const fresh = await smtp.waitForCode(email, 1);
    expect((await post('/api/auth/email/verify', { email, code: fresh })).status).toBe(200);
  });

  it('an expired code is refused', async () => {
    const { email, user, code } = await signupUnverified();
    await t.deps.db.query(`update auth.email_codes set expires_at = now() - interval '1 second' where user_id = $1`, [
      user.id,
    ]);
    expectError(await post('/api/auth/email/verify', { email, code }), 400, 'INVALID_CODE');
  });

  it('resending replaces the old code', async () => {
    const { email, code } = await signupUnverified();
    const r = await post('/api/auth/email/send-verification', { email });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, message: expect.any(String) });
    const fresh = await smtp.waitForCode(email, 1);
    if (fresh !== code) expectError(await post('/api/auth/email/verify', { email, code }), 400, 'INVALID_CODE');
    expect((await post('/api/auth/email/verify', { email, code: fresh })).status).toBe(200);
  });

  it('unknown addresses get the same answers and no mail', async () => {
    const nobody = uniqueEmail('nobody');
    const known = (await signupUnverified()).email;
    const a = await post('/api/auth/email/send-verification', { email: nobody });
    const b = await post('/api/auth/email/send-verification', { email: known });
    expect(a.status).toBe(200);
    expect(a.body).toEqual(b.body);
    const c = await post('/api/auth/email/send-reset-password', { email: nobody });
    expect(c.status).toBe(200);
    expectError(await post('/api/auth/email/verify', { email: nobody, code: '123456' }), 400, 'INVALID_CODE');
    expectError(
      await post('/api/auth/email/reset-password', { email: nobody, code: '123456', newPassword: 'password-9' }),
      400,
      'INVALID_CODE',
    );
    await smtp.waitForCode(known, 1);
    expect(smtp.count(nobody)).toBe(0);
  });

  it('limits code emails per address (429 RATE_LIMITED with Retry-After)', async () => {
    const email = uniqueEmail('flood');
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await post('/api/auth/email/send-reset-password', { email }));
    expect(answers.slice(0, 5).every((a) => a.status === 200)).toBe(true);
    expectError(answers[5]!, 429, 'RATE_LIMITED');
    expect(Number(answers[5]!.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('password reset: code by email, new password works, old does not, every session ends', async () => {
    const { email, code } = await signupUnverified();
    await post('/api/auth/email/verify', { email, code });
    const s1 = await signin(email, 'password-1');
    const s2 = await signin(email, 'password-1');
    expect((await post('/api/auth/email/send-reset-password', { email })).status).toBe(200);
    const reset = await smtp.waitForCode(email, 1);
    // The reset code is not a verification code and vice versa.
    expectError(await post('/api/auth/email/verify', { email, code: reset }), 400, 'INVALID_CODE');
    const r = await post('/api/auth/email/reset-password', { email, code: reset, newPassword: 'password-new' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, message: expect.any(String) });
    expectError(await signin(email, 'password-1'), 401, 'INVALID_CREDENTIALS');
    expect((await signin(email, 'password-new')).status).toBe(200);
    for (const s of [s1, s2]) {
      expectError(await call(t, 'GET', '/api/auth/user', { token: s.body.accessToken }), 401, 'AUTH_UNAUTHORIZED');
      expectError(await post('/api/auth/refresh', { refreshToken: s.body.refreshToken }), 401, 'INVALID_REFRESH_TOKEN');
    }
    expectError(
      await post('/api/auth/email/reset-password', { email, code: reset, newPassword: 'password-again' }),
      400,
      'INVALID_CODE',
    );
  });

  it("password reset by a signed-in user keeps that user's own session, ends the others", async () => {
    const { email, code } = await signupUnverified();
    await post('/api/auth/email/verify', { email, code });
    const mine = await signin(email, 'password-1');
    const other = await signin(email, 'password-1');
    await post('/api/auth/email/send-reset-password', { email });
    const reset = await smtp.waitForCode(email, 1);
    const r = await post(
      '/api/auth/email/reset-password',
      { email, code: reset, newPassword: 'password-new' },
      mine.body.accessToken,
    );
    expect(r.status).toBe(200);
    expect((await call(t, 'GET', '/api/auth/user', { token: mine.body.accessToken })).status).toBe(200);
    expectError(await call(t, 'GET', '/api/auth/user', { token: other.body.accessToken }), 401, 'AUTH_UNAUTHORIZED');
  });

  it('password reset verifies an unverified address (the code proves the mailbox) and voids the verification code', async () => {
    const { email, code } = await signupUnverified();
    await post('/api/auth/email/send-reset-password', { email });
    const reset = await smtp.waitForCode(email, 1);
    expect(
      (await post('/api/auth/email/reset-password', { email, code: reset, newPassword: 'password-new' })).status,
    ).toBe(200);
    const s = await signin(email, 'password-new');
    expect(s.status).toBe(200);
    expect(s.body.user.emailVerified).toBe(true);
    // The code mailed at sign-up would open a session without the new password.
    expectError(await post('/api/auth/email/verify', { email, code }), 400, 'INVALID_CODE');
  });

  it.each([
    ['/api/auth/email/verify', { email: 'a@example.com', code: '12345' }],
    ['/api/auth/email/verify', { email: 'a@example.com', code: 123456 }],
    ['/api/auth/email/verify', { email: 'a@example.com', code: '12345a' }],
    ['/api/auth/email/verify', { email: 'a@example.com' }],
    ['/api/auth/email/send-verification', {}],
    ['/api/auth/email/send-verification', { email: ['a@example.com'] }],
    ['/api/auth/email/send-reset-password', { email: null }],
    ['/api/auth/email/reset-password', { email: 'a@example.com', code: '123456', newPassword: 'short' }],
    ['/api/auth/email/reset-password', { email: 'a@example.com', code: '123456' }],
  ])('%s refuses %j with 400 INVALID_INPUT', async (path, body) => {
    expectError(await post(path, body), 400, 'INVALID_INPUT');
  });
});

describe('mail without SMTP_URL goes to the log', () => {
  it('writes the code to the log at info level, and that code verifies the address', async () => {
    const t = await startApp('embedded', { REQUIRE_EMAIL_VERIFICATION: 'true' });
    try {
      expect(t.deps.mailer.kind).toBe('log');
      const lines: Array<{ obj: any; msg?: string }> = [];
      const log = {
        info: (obj: object, msg?: string) => lines.push({ obj, msg }),
        error: (obj: object, msg?: string) => lines.push({ obj, msg }),
      };
      const email = uniqueEmail('log');
      const a = await t.deps.auth.signUp({ email, password: 'password-1' }, { ip: '127.0.0.1', userAgent: null, log });
      expect(a.accessToken).toBeNull();
      await new Promise((r) => setTimeout(r, 50));
      expect(lines).toHaveLength(1);
      expect(lines[0]!.obj.mail.to).toBe(email);
      expect(JSON.stringify(lines[0])).not.toContain('password-1');
      const code = /(\d{6})/.exec(lines[0]!.obj.mail.text)![1];
      const v = await call(t, 'POST', '/api/auth/email/verify', { body: { email, code } });
      expect(v.status).toBe(200);
    } finally {
      await t.close();
    }
  });
});
