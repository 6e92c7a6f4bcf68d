import { generateSync } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import type { TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { APP, OAuthFixture, newSub } from './oauth-fixture.js';
import { startSmtp } from './smtp.js';
import { expectError, uniqueEmail } from './util.js';

// Banning users: PATCH /api/auth/users/:id {banned, bannedUntil, banReason}; every way in refused.
describe.each(backends())('banned users (%s)', (backend) => {
  const f = new OAuthFixture();
  let t: TestApp;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  beforeAll(async () => {
    smtp = await startSmtp();
    await f.start(backend, { SMTP_URL: smtp.url, AUTH_ANONYMOUS_SIGNIN: 'true' });
    t = f.t;
  });
  afterAll(async () => {
    await f.close();
    await smtp?.close();
  });

  const admin = () => ({ 'x-api-key': t.adminKey });
  const post = (path: string, body: unknown, token?: string) => call(t, 'POST', path, { body, token });
  const patch = (id: string, body: unknown) => call(t, 'PATCH', `/api/auth/users/${id}`, { headers: admin(), body });
  const signin = (email: string, password = 'password-1') => post('/api/auth/signin', { email, password });

  async function account() {
    const email = uniqueEmail('ban');
    const up = await post('/api/auth/signup', { email, password: 'password-1' });
    expect(up.status, up.text).toBe(200);
    return {
      email,
      id: up.body.user.id as string,
      token: up.body.accessToken as string,
      refreshToken: up.body.refreshToken as string,
    };
  }

  /** The token of the magic link mailed to `to`, once it arrives. */
  async function magicToken(to: string): Promise<string> {
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 20))) {
      const m = smtp.mails.find((x) => x.to.includes(to) && x.raw.includes('magic_token'));
      const text = m?.raw
        .replace(/=\r?\n/g, '')
        .replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
      if (text) return /magic_token=(ml_[\w-]+)/.exec(text)![1]!;
    }
    throw new Error(`no link mailed to ${to}`);
  }

  /** Asserts 403 USER_BANNED saying until when, and to contact the admin. */
  function expectBanned(a: Awaited<ReturnType<typeof call>>, until: RegExp = /indefinitely/) {
    expectError(a, 403, 'USER_BANNED');
    expect(a.body.message).toMatch(until);
    expect(a.body.nextActions).toMatch(/administrator/);
    expect(a.body.accessToken).toBeUndefined();
  }

  it('a ban ends every session at once and refuses password, email codes, magic link and refresh; the user shows it', async () => {
    const u = await account();
    await post('/api/auth/email/send-otp', { email: u.email });
    const code = await smtp.waitForCode(u.email);
    await post('/api/auth/email/send-verification', { email: u.email });
    const verification = await smtp.waitForCode(u.email, 1);
    const banned = await patch(u.id, { banned: true, banReason: 'Spam in the comments' });
    expect(banned.status, banned.text).toBe(200);
    expect(banned.body.user).toMatchObject({ id: u.id, bannedUntil: 'infinity', banReason: 'Spam in the comments' });
    // The tokens stop working, as DELETE /api/auth/users/:id/sessions does.
    expectError(await call(t, 'GET', '/api/auth/user', { token: u.token }), 401, 'AUTH_UNAUTHORIZED');
    expectBanned(await post('/api/auth/refresh', { refreshToken: u.refreshToken }));
    expect((await call(t, 'GET', `/api/auth/users/${u.id}/sessions`, { headers: admin() })).body.sessions).toEqual([]);
    // The password is checked first: a wrong one tells nothing of the ban.
    expectError(await signin(u.email, 'wrong-password'), 401, 'INVALID_CREDENTIALS');
    expectBanned(await signin(u.email));
    expectBanned(await post('/api/auth/sessions', { email: u.email, otp: code, method: 'otp' }));
    expectBanned(await post('/api/auth/email/verify', { email: u.email, code: verification }));
    expect((await post('/api/auth/magic-link', { email: u.email, redirectTo: APP })).status).toBe(200);
    expectBanned(await post('/api/auth/magic-link/verify', { token: await magicToken(u.email) }));
    // Admins see it wherever users are listed.
    const one = await call(t, 'GET', `/api/auth/users/${u.id}`, { headers: admin() });
    expect(one.body.user).toMatchObject({ bannedUntil: 'infinity', banReason: 'Spam in the comments' });
    const list = await call(t, 'GET', `/api/auth/users?search=${encodeURIComponent(u.email)}`, { headers: admin() });
    expect(list.body.data.map((x: { bannedUntil: string | null }) => x.bannedUntil)).toEqual(['infinity']);
  });

  it('a banned user with MFA gets no challenge, and a challenge issued before the ban opens no session', async () => {
    const u = await account();
    const e = await post('/api/auth/mfa/factors', { friendlyName: 'phone' }, u.token);
    const base = Math.floor(Date.now() / 30_000) * 30;
    const code = (step: number) => generateSync({ secret: e.body.secret, epoch: base + step * 30 + 1 });
    expect((await post(`/api/auth/mfa/factors/${e.body.id}/verify`, { code: code(0) }, u.token)).status).toBe(200);
    const first = await signin(u.email);
    expect(first.body.mfaRequired, first.text).toBe(true);
    expect((await patch(u.id, { banned: true })).status).toBe(200);
    expectBanned(
      await post('/api/auth/mfa/challenge', { token: first.body.challenge.token, factorId: e.body.id, code: code(1) }),
    );
    const again = await signin(u.email);
    expectBanned(again);
    expect(again.body.challenge).toBeUndefined();
  });

  it('refuses a provider sign-in (OpenID Connect ID token) and logs the refusal and the admin actions', async () => {
    const sub = newSub();
    const email = uniqueEmail('ban-kc');
    const idToken = () =>
      f.oidc.mintIdToken({ sub, email, email_verified: true, name: 'Kay' }, { audience: 'plinth-mobile' });
    const ok = await post('/api/auth/id-token?client_type=mobile', { provider: 'kc', token: await idToken() });
    expect(ok.status, ok.text).toBe(200);
    const id = ok.body.user.id as string;
    expect((await patch(id, { banned: true, banReason: 'chargebacks' })).status).toBe(200);
    expectBanned(await post('/api/auth/id-token?client_type=mobile', { provider: 'kc', token: await idToken() }));
    expect((await patch(id, { banned: false })).status).toBe(200);
    expect(
      (await post('/api/auth/id-token?client_type=mobile', { provider: 'kc', token: await idToken() })).status,
    ).toBe(200);

    const page = await call(t, 'GET', '/api/logs/auth?limit=200', { headers: admin() });
    const mine = page.body.logs
      .filter((l: any) => l.body.userId === id)
      .map((l: any) => [l.eventMessage, l.body.reason ?? l.body.method ?? null])
      .reverse();
    expect(mine).toEqual(
      expect.arrayContaining([
        ['user banned', 'chargebacks'],
        ['sign-in failed', 'USER_BANNED'],
        ['user unbanned', null],
      ]),
    );
  });

  it('an anonymous user can be banned: its session ends, refresh and upgrade are refused', async () => {
    const a = await post('/api/auth/signin/anonymous', {});
    expect(a.status, a.text).toBe(200);
    const b = await patch(a.body.user.id, { banned: true });
    expect(b.body.user).toMatchObject({ isAnonymous: true, bannedUntil: 'infinity' });
    expectBanned(await post('/api/auth/refresh', { refreshToken: a.body.refreshToken }));
    expectError(
      await post(
        '/api/auth/anonymous/convert',
        { email: uniqueEmail('anon'), password: 'password-1' },
        a.body.accessToken,
      ),
      401,
    );
    const still = await call(t, 'GET', `/api/auth/users/${a.body.user.id}`, { headers: admin() });
    expect(still.body.user).toMatchObject({ isAnonymous: true, email: '' });
  });

  it('a timed ban says until when and no longer blocks once it has passed; unban lifts a ban at once', async () => {
    const u = await account();
    const until = new Date(Date.now() + 3_600_000).toISOString();
    const b = await patch(u.id, { banned: true, bannedUntil: until });
    expect(b.body.user).toMatchObject({ bannedUntil: until, banReason: null });
    expectBanned(await signin(u.email), new RegExp(`until ${until.replace(/\./g, '\\.')}`));
    await t.deps.db.query(`update auth.users set banned_until = now() - interval '1 second' where id = $1`, [u.id]);
    const after = await signin(u.email);
    expect(after.status, after.text).toBe(200);
    expect(after.body.user).toMatchObject({ bannedUntil: null, banReason: null });

    expect((await patch(u.id, { banned: true, banReason: 'again' })).status).toBe(200);
    expectBanned(await signin(u.email));
    const lifted = await patch(u.id, { banned: false });
    expect(lifted.body.user).toMatchObject({ bannedUntil: null, banReason: null });
    expect((await signin(u.email)).status).toBe(200);
    const row = await t.deps.db.query(`select banned_until, ban_reason from auth.users where id = $1`, [u.id]);
    expect(row.rows[0]).toEqual({ banned_until: null, ban_reason: null });
  });

  it.each([
    ['a bannedUntil in the past', { banned: true, bannedUntil: '2001-01-01T00:00:00Z' }, /in the future/],
    ['a bannedUntil that is no time', { banned: true, bannedUntil: 'next tuesday' }, /bannedUntil/],
    ['a reason over 500 characters', { banned: true, banReason: 'x'.repeat(501) }, /banReason/],
    ['a bannedUntil without banned', { bannedUntil: '2099-01-01T00:00:00Z' }, /go with banned: true/],
    ['a reason with an unban', { banned: false, banReason: 'sorry' }, /unban takes no/],
    ['banned that is not a boolean', { banned: 'yes' }, /banned.*boolean/],
  ])('refuses %s (400, saying why) and changes nothing', async (_n, body, why) => {
    const u = await account();
    const a = await patch(u.id, { name: 'Changed', ...body });
    expectError(a, 400, 'INVALID_INPUT');
    expect(a.body.message).toMatch(why);
    const after = (await signin(u.email)).body.user;
    expect([after.bannedUntil, after.profile.name]).toEqual([null, undefined]);
  });

  it('is for admins only; an unknown user is 404', async () => {
    const u = await account();
    expectError(await call(t, 'PATCH', `/api/auth/users/${u.id}`, { token: u.token, body: { banned: true } }), 403);
    expectError(await patch(crypto.randomUUID(), { banned: true }), 404, 'USER_NOT_FOUND');
    expect((await signin(u.email)).status).toBe(200);
  });
});
