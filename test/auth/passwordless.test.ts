import { generateSync } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { startSmtp } from './smtp.js';
import { claimsOf, expectError, uniqueEmail } from './util.js';

const APP = 'http://app.test/auth/callback';

/** The text of a mail with quoted-printable soft breaks and escapes undone. */
const decoded = (raw: string) =>
  raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));

describe.each(backends())('passwordless sign-in: magic links and email codes (%s)', (backend) => {
  let t: TestApp;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  beforeAll(async () => {
    smtp = await startSmtp();
    t = await startApp(backend, { SMTP_URL: smtp.url, AUTH_REDIRECT_URLS: `${APP},http://app.test/deep/*` });
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  const post = (path: string, body: unknown, token?: string) => call(t, 'POST', path, { body, token });

  async function account() {
    const email = uniqueEmail('pl');
    const up = await post('/api/auth/signup', { email, password: 'password-1' });
    expect(up.status).toBe(200);
    return { email, id: up.body.user.id as string, token: up.body.accessToken as string };
  }

  /** The link of the n-th mail to `to`, once it arrives. */
  async function linkTo(to: string, skip = 0): Promise<URL> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const m = smtp.mails.filter((x) => x.to.includes(to))[skip];
      if (m) return new URL(/(http:\/\/app\.test\S+)/.exec(decoded(m.raw))![1]!);
      if (Date.now() > deadline) throw new Error(`no mail to ${to}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('mails a link to the allowed redirect; its token signs in once, and proves the address', async () => {
    const u = await account();
    const s = await post('/api/auth/magic-link', { email: u.email.toUpperCase(), redirectTo: `${APP}?next=%2Fhome` });
    expect(s.status, s.text).toBe(200);
    expect(s.body).toEqual({ success: true, message: expect.any(String) });
    const link = await linkTo(u.email);
    expect(link.origin + link.pathname).toBe(APP);
    expect(link.searchParams.get('next')).toBe('/home');
    const token = link.searchParams.get('magic_token')!;
    expect(token).toMatch(/^ml_/);
    const v = await post('/api/auth/magic-link/verify', { token });
    expect(v.status, v.text).toBe(200);
    expect(v.body.user).toMatchObject({ id: u.id, emailVerified: true });
    expect(claimsOf(v.body.accessToken)).toMatchObject({ aal: 'aal1', amr: [{ method: 'magiclink' }] });
    expectError(await post('/api/auth/magic-link/verify', { token }), 400, 'INVALID_CODE');
  });

  it('refuses redirects outside AUTH_REDIRECT_URLS, before anything is mailed', async () => {
    const u = await account();
    for (const redirectTo of [
      'http://evil.test/auth/callback',
      `${APP}/../x`,
      'javascript:alert(1)',
      `${APP}#frag`,
      'not a url',
      'http://app.test/deeper',
    ]) {
      expectError(await post('/api/auth/magic-link', { email: u.email, redirectTo }), 400, 'REDIRECT_NOT_ALLOWED');
    }
    expect(
      (await post('/api/auth/magic-link', { email: u.email, redirectTo: 'http://app.test/deep/a/b' })).status,
    ).toBe(200);
    const link = await linkTo(u.email);
    expect(link.pathname).toBe('/deep/a/b');
    expect(smtp.count(u.email)).toBe(1);
  });

  it('an unknown address gets the same answer and no mail; wrong, expired and superseded tokens are refused', async () => {
    const nobody = uniqueEmail('nobody');
    const a = await post('/api/auth/magic-link', { email: nobody, redirectTo: APP });
    expect(a.status).toBe(200);
    const u = await account();
    await post('/api/auth/magic-link', { email: u.email, redirectTo: APP });
    const first = (await linkTo(u.email)).searchParams.get('magic_token')!;
    await post('/api/auth/magic-link', { email: u.email, redirectTo: APP });
    const second = (await linkTo(u.email, 1)).searchParams.get('magic_token')!;
    expectError(await post('/api/auth/magic-link/verify', { token: first }), 400, 'INVALID_CODE');
    expectError(await post('/api/auth/magic-link/verify', { token: `${second.slice(0, -2)}xx` }), 400, 'INVALID_CODE');
    for (const token of ['', 'ml_x', 'x'.repeat(300)])
      expectError(await post('/api/auth/magic-link/verify', { token }), 400);
    await t.deps.db.query(
      `update auth.email_codes set expires_at = now() - interval '1 second' where user_id = $1 and purpose = 'magic_link'`,
      [u.id],
    );
    expectError(await post('/api/auth/magic-link/verify', { token: second }), 400, 'INVALID_CODE');
    expect(smtp.count(nobody)).toBe(0);
  });

  it('links are limited per address like code emails (429)', async () => {
    const u = await account();
    for (let i = 0; i < 5; i++)
      expect((await post('/api/auth/magic-link', { email: u.email, redirectTo: APP })).status).toBe(200);
    expectError(await post('/api/auth/magic-link', { email: u.email, redirectTo: APP }), 429, 'RATE_LIMITED');
  });

  it('email codes: wrong, reused and expired codes are refused; five tries at most', async () => {
    const u = await account();
    const otp = (code: string) => post('/api/auth/sessions', { email: u.email, otp: code, method: 'otp' });
    await post('/api/auth/email/send-otp', { email: u.email });
    const code = await smtp.waitForCode(u.email);
    const wrong = code === '000000' ? '111111' : '000000';
    expectError(await otp(wrong), 400, 'INVALID_CODE');
    const ok = await otp(code);
    expect(ok.status, ok.text).toBe(200);
    expect(claimsOf(ok.body.accessToken).amr).toEqual([{ method: 'otp', timestamp: expect.any(Number) }]);
    expectError(await otp(code), 400, 'INVALID_CODE');
    await post('/api/auth/email/send-otp', { email: u.email });
    const expiring = await smtp.waitForCode(u.email, 1);
    await t.deps.db.query(`update auth.email_codes set expires_at = now() - interval '1 second' where user_id = $1`, [
      u.id,
    ]);
    expectError(await otp(expiring), 400, 'INVALID_CODE');
    await post('/api/auth/email/send-otp', { email: u.email });
    const last = await smtp.waitForCode(u.email, 2);
    for (let i = 0; i < 5; i++) expectError(await otp(last === '000000' ? '111111' : '000000'), 400, 'INVALID_CODE');
    expectError(await otp(last), 400, 'INVALID_CODE');
    expectError(await otp('12345'), 400, 'INVALID_INPUT');
  });

  it('with an active MFA factor, a magic link and an email code answer a challenge, not a session', async () => {
    const u = await account();
    const e = await post('/api/auth/mfa/factors', {}, u.token);
    const base = Math.floor(Date.now() / 30_000) * 30 + 1;
    const v = await post(
      `/api/auth/mfa/factors/${e.body.id}/verify`,
      { code: generateSync({ secret: e.body.secret, epoch: base }) },
      u.token,
    );
    expect(v.status).toBe(200);
    await post('/api/auth/magic-link', { email: u.email, redirectTo: APP });
    const m = await post('/api/auth/magic-link/verify', {
      token: (await linkTo(u.email)).searchParams.get('magic_token'),
    });
    expect(m.body).toMatchObject({ mfaRequired: true, challenge: { token: expect.any(String) } });
    expect(m.body.accessToken).toBeUndefined();
    const done = await post('/api/auth/mfa/challenge', {
      token: m.body.challenge.token,
      factorId: e.body.id,
      code: generateSync({ secret: e.body.secret, epoch: base + 30 }),
    });
    expect(done.status, done.text).toBe(200);
    expect(claimsOf(done.body.accessToken).amr.map((a: { method: string }) => a.method)).toEqual(['magiclink', 'totp']);
    await post('/api/auth/email/send-otp', { email: u.email });
    const o = await post('/api/auth/sessions', {
      email: u.email,
      otp: await smtp.waitForCode(u.email, 1),
      method: 'otp',
    });
    expect(o.body).toMatchObject({ mfaRequired: true });
  });
});
