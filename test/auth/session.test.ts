import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { USER_SHAPE, expectError, uniqueEmail } from './util.js';

describe.each(backends())('auth sessions (%s)', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp(backend);
  });
  afterAll(async () => {
    await t?.close();
  });

  const signup = (body: unknown) => call(t, 'POST', '/api/auth/signup', { body });
  const signin = (email: string, password: string) =>
    call(t, 'POST', '/api/auth/signin', { body: { email, password } });

  it('signs up with exactly the spec fields, normalising the email and storing an argon2id hash', async () => {
    const email = uniqueEmail('Signup');
    const a = await signup({ email: `  ${email.toUpperCase()} `, password: 'correct horse', name: 'Ada' });
    expect(a.status).toBe(200);
    expect(Object.keys(a.body).sort()).toEqual(['accessToken', 'refreshToken', 'requireEmailVerification', 'user']);
    expect(a.body.user).toEqual({
      ...USER_SHAPE,
      email: email.toLowerCase(),
      emailVerified: false,
      profile: { name: 'Ada' },
    });
    expect(Object.keys(a.body.user).sort()).toEqual([
      'banReason',
      'bannedUntil',
      'createdAt',
      'email',
      'emailVerified',
      'factors',
      'id',
      'isAnonymous',
      'metadata',
      'profile',
      'providers',
      'updatedAt',
    ]);
    expect(a.body.requireEmailVerification).toBe(false);
    expect(a.body.accessToken).toMatch(/^ey[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(a.body.refreshToken).toMatch(/^rt_/);
    const { rows } = await t.deps.db.query<{ password_hash: string }>(
      'select password_hash from auth.users where id = $1',
      [a.body.user.id],
    );
    expect(rows[0]!.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(rows[0]!.password_hash).not.toContain('correct horse');
    // The access token is a user token for this user.
    const me = await call(t, 'GET', '/api/auth/user', { token: a.body.accessToken });
    expect(me.status).toBe(200);
    expect(me.body).toEqual({ user: a.body.user });
  });

  it('signs up without a name (empty profile)', async () => {
    const a = await signup({ email: uniqueEmail(), password: '12345678' });
    expect(a.status).toBe(200);
    expect(a.body.user.profile).toEqual({});
  });

  it('refuses a duplicate email (any case, any spaces) with 409 ALREADY_EXISTS', async () => {
    const email = uniqueEmail('dup');
    expect((await signup({ email, password: 'password-1' })).status).toBe(200);
    const again = await signup({ email: ` ${email.toUpperCase()}`, password: 'password-2' });
    expectError(again, 409, 'ALREADY_EXISTS');
    expect(again.body.message).not.toMatch(/constraint|users_email/);
    const { rows } = await t.deps.db.query('select 1 from auth.users where email = $1', [email]);
    expect(rows).toHaveLength(1);
  });

  it('two simultaneous sign-ups with one email make one account and one 409', async () => {
    const email = uniqueEmail('twin');
    const both = await Promise.all([
      signup({ email, password: 'password-1' }),
      signup({ email, password: 'password-2' }),
    ]);
    expect(both.map((a) => a.status).sort()).toEqual([200, 409]);
    const { rows } = await t.deps.db.query('select 1 from auth.users where email = $1', [email]);
    expect(rows).toHaveLength(1);
  });

  it.each([
    ['a password of 7 characters', { email: 'x@example.com', password: '1234567' }],
    ['a password of 129 characters', { email: 'x@example.com', password: 'p'.repeat(129) }],
    ['an email without @', { email: 'not-an-email', password: 'password1' }],
    ['an email without a dotted domain', { email: 'a@localhost', password: 'password1' }],
    ['an email with spaces inside', { email: 'a b@example.com', password: 'password1' }],
    ['an empty email', { email: '   ', password: 'password1' }],
    ['no password', { email: 'x@example.com' }],
    ['no email', { password: 'password1' }],
    ['an object as email', { email: { $ne: 1 }, password: 'password1' }],
    ['an array as password', { email: 'x@example.com', password: ['password1'] }],
    ['a name of 257 characters', { email: 'x@example.com', password: 'password1', name: 'n'.repeat(257) }],
  ])('refuses sign-up with %s (400, nothing stored)', async (_name, body) => {
    const before = await t.deps.db.query<{ n: number }>('select count(*)::int as n from auth.users');
    expectError(await signup(body), 400, 'INVALID_INPUT');
    const after = await t.deps.db.query<{ n: number }>('select count(*)::int as n from auth.users');
    expect(after.rows[0]!.n).toBe(before.rows[0]!.n);
  });

  it('accepts passwords of 8 and 128 characters (counted in characters, not bytes)', async () => {
    expect((await signup({ email: uniqueEmail(), password: 'é'.repeat(8) })).status).toBe(200);
    const email = uniqueEmail();
    expect((await signup({ email, password: '🔑'.repeat(128) })).status).toBe(200);
    expect((await signin(email, '🔑'.repeat(128))).status).toBe(200);
  });

  it('signs in with exactly the spec fields; wrong password and unknown email are both 401 INVALID_CREDENTIALS', async () => {
    const email = uniqueEmail('signin');
    await signup({ email, password: 'password-ok', name: 'B' });
    const ok = await signin(` ${email.toUpperCase()} `, 'password-ok');
    expect(ok.status).toBe(200);
    expect(Object.keys(ok.body).sort()).toEqual(['accessToken', 'refreshToken', 'user']);
    expect(ok.body.user).toEqual({ ...USER_SHAPE, email, emailVerified: false, profile: { name: 'B' } });

    const wrong = await signin(email, 'password-no');
    const unknown = await signin(uniqueEmail('nobody'), 'password-ok');
    expectError(wrong, 401, 'INVALID_CREDENTIALS');
    expectError(unknown, 401, 'INVALID_CREDENTIALS');
    expect(wrong.body).toEqual(unknown.body);
  });

  it('does not let a user without a real password (hash placeholder) sign in', async () => {
    const u = await createTestUser(t);
    expectError(await signin(u.email, 'test-no-password'), 401, 'INVALID_CREDENTIALS');
  });

  it('GET /api/auth/user needs a user token: none 401, anon key 403, admin key 403', async () => {
    expectError(await call(t, 'GET', '/api/auth/user'), 401, 'UNAUTHORIZED');
    expectError(await call(t, 'GET', '/api/auth/user', { headers: { apikey: t.anonKey } }), 403, 'FORBIDDEN');
    expectError(await call(t, 'GET', '/api/auth/user', { headers: { 'x-api-key': t.adminKey } }), 403, 'FORBIDDEN');
    const u = await createTestUser(t);
    const me = await call(t, 'GET', '/api/auth/user', { headers: u.auth });
    expect(me.status).toBe(200);
    expect(me.body.user).toMatchObject({ id: u.userId, email: u.email, emailVerified: true });
  });

  it('sign-out ends the session: its access token is refused (401) and its refresh token no longer works', async () => {
    const email = uniqueEmail('out');
    const s = await signup({ email, password: 'password-1' });
    const other = await signin(email, 'password-1');
    const out = await call(t, 'POST', '/api/auth/signout', { token: s.body.accessToken });
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ success: true, message: expect.any(String) });
    expectError(await call(t, 'GET', '/api/auth/user', { token: s.body.accessToken }), 401, 'AUTH_UNAUTHORIZED');
    expectError(
      await call(t, 'POST', '/api/auth/refresh', { body: { refreshToken: s.body.refreshToken } }),
      401,
      'INVALID_REFRESH_TOKEN',
    );
    // Refused on other endpoints too, even public ones (a bad credential is never downgraded).
    expectError(await call(t, 'POST', '/api/auth/signout', { token: s.body.accessToken }), 401, 'AUTH_UNAUTHORIZED');
    expectError(
      await call(t, 'POST', '/api/auth/signin', { token: s.body.accessToken, body: { email, password: 'password-1' } }),
      401,
      'AUTH_UNAUTHORIZED',
    );
    // The user's other session is untouched.
    expect((await call(t, 'GET', '/api/auth/user', { token: other.body.accessToken })).status).toBe(200);
  });

  it("a signed-out token is refused by the other areas' endpoints too", async () => {
    const s = await signup({ email: uniqueEmail('everywhere'), password: 'password-1' });
    const probes: Array<[string, string, unknown?]> = [
      ['GET', '/api/db/no_such_table'],
      ['POST', '/api/db/rpc/no_such_fn', {}],
      ['GET', '/api/storage/buckets'],
      ['POST', '/api/ai/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'hi' }] }],
      ['GET', '/api/functions'],
    ];
    const before = [];
    for (const [method, path, body] of probes)
      before.push((await call(t, method, path, { token: s.body.accessToken, body })).status);
    // Before sign-out the token gets past identity everywhere (what follows is each area's answer).
    for (const status of before) expect(status).not.toBe(401);
    expect((await call(t, 'POST', '/api/auth/signout', { token: s.body.accessToken })).status).toBe(200);
    for (const [method, path, body] of probes) {
      expectError(await call(t, method, path, { token: s.body.accessToken, body }), 401, 'AUTH_UNAUTHORIZED');
    }
  });

  it('sign-out also works with a JSON content type and no body, and with only the refresh token', async () => {
    const email = uniqueEmail('out2');
    const s = await signup({ email, password: 'password-1' });
    const out = await call(t, 'POST', '/api/auth/signout', {
      token: s.body.accessToken,
      headers: { 'content-type': 'application/json' },
      raw: '',
    });
    expect(out.status).toBe(200);

    const s2 = await signin(email, 'password-1');
    const byRefresh = await call(t, 'POST', '/api/auth/signout', { body: { refreshToken: s2.body.refreshToken } });
    expect(byRefresh.status).toBe(200);
    expectError(await call(t, 'GET', '/api/auth/user', { token: s2.body.accessToken }), 401, 'AUTH_UNAUTHORIZED');
    expectError(
      await call(t, 'POST', '/api/auth/signout', { body: { refreshToken: s2.body.refreshToken } }),
      401,
      'INVALID_REFRESH_TOKEN',
    );
    expectError(await call(t, 'POST', '/api/auth/signout', { body: {} }), 401, 'UNAUTHORIZED');
    expectError(await call(t, 'POST', '/api/auth/signout'), 401, 'UNAUTHORIZED');
  });

  it('refresh returns a new pair and rotates: the old refresh token is spent', async () => {
    const email = uniqueEmail('rot');
    const s = await signup({ email, password: 'password-1' });
    const r1 = await call(t, 'POST', '/api/auth/refresh', { body: { refreshToken: s.body.refreshToken } });
    expect(r1.status).toBe(200);
    expect(Object.keys(r1.body).sort()).toEqual(['accessToken', 'refreshToken', 'user']);
    expect(r1.body.refreshToken).not.toBe(s.body.refreshToken);
    expect(r1.body.user.email).toBe(email);
    const me = await call(t, 'GET', '/api/auth/user', { token: r1.body.accessToken });
    expect(me.status).toBe(200);
    const r2 = await call(t, 'POST', '/api/auth/refresh', { body: { refreshToken: r1.body.refreshToken } });
    expect(r2.status).toBe(200);
  });

  it('reusing a spent refresh token revokes the session: every token of it stops working', async () => {
    const s = await signup({ email: uniqueEmail('reuse'), password: 'password-1' });
    const r1 = await call(t, 'POST', '/api/auth/refresh', { body: { refreshToken: s.body.refreshToken } });
    expect(r1.status).toBe(200);
    // The thief (or a replay) presents the spent token.
    const replay = await call(t, 'POST', '/api/auth/refresh', { body: { refreshToken: s.body.refreshToken } });
    expectError(replay, 401, 'INVALID_REFRESH_TOKEN');
    // The legitimate holder's new tokens are dead too.
    expectError(
      await call(t, 'POST', '/api/auth/refresh', { body: { refreshToken: r1.body.refreshToken } }),
      401,
      'INVALID_REFRESH_TOKEN',
    );
    expectError(await call(t, 'GET', '/api/auth/user', { token: r1.body.accessToken }), 401, 'AUTH_UNAUTHORIZED');
    expectError(await call(t, 'GET', '/api/auth/user', { token: s.body.accessToken }), 401, 'AUTH_UNAUTHORIZED');
  });

  it('two concurrent refreshes with one token: at most one succeeds', async () => {
    const s = await signup({ email: uniqueEmail('race'), password: 'password-1' });
    const both = await Promise.all([
      call(t, 'POST', '/api/auth/refresh', { body: { refreshToken: s.body.refreshToken } }),
      call(t, 'POST', '/api/auth/refresh', { body: { refreshToken: s.body.refreshToken } }),
    ]);
    expect(both.filter((a) => a.status === 200).length).toBeLessThanOrEqual(1);
    for (const a of both) expect([200, 401]).toContain(a.status);
  });

  it.each([
    ['an unknown token', { refreshToken: `rt_${'A'.repeat(43)}` }],
    ['a malformed token', { refreshToken: 'nope' }],
    ['an access token', null],
  ])('refresh with %s is 401 INVALID_REFRESH_TOKEN', async (_n, body) => {
    const u = await createTestUser(t);
    expectError(
      await call(t, 'POST', '/api/auth/refresh', { body: body ?? { refreshToken: u.token } }),
      401,
      'INVALID_REFRESH_TOKEN',
    );
  });

  it('refresh validates its body (400)', async () => {
    expectError(await call(t, 'POST', '/api/auth/refresh', { body: {} }), 400, 'INVALID_INPUT');
    expectError(await call(t, 'POST', '/api/auth/refresh', { body: { refreshToken: { a: 1 } } }), 400, 'INVALID_INPUT');
    expectError(
      await call(t, 'POST', '/api/auth/refresh', { body: { refreshToken: 'x'.repeat(5000) } }),
      400,
      'INVALID_INPUT',
    );
  });

  it('access tokens are HS256 JWTs with sub, email, role, sid and a 15-minute life by default', async () => {
    const email = uniqueEmail('claims');
    const a = await signup({ email, password: 'password-1' });
    const [header, payload] = a.body.accessToken
      .split('.')
      .slice(0, 2)
      .map((p: string) => JSON.parse(Buffer.from(p, 'base64url').toString()));
    expect(header).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(payload).toMatchObject({ sub: a.body.user.id, email, role: 'authenticated', sid: expect.any(String) });
    expect(payload.exp - payload.iat).toBe(900);
  });

  it('every auth endpoint is in the OpenAPI document', async () => {
    const doc = await call(t, 'GET', '/api/openapi.json');
    expect(doc.status).toBe(200);
    const paths = Object.keys(doc.body.paths);
    for (const p of [
      'signup',
      'signin',
      'user',
      'signout',
      'refresh',
      'email/verify',
      'email/send-verification',
      'email/send-reset-password',
      'email/reset-password',
      'users',
      'users/{id}',
    ]) {
      expect(paths).toContain(`/api/auth/${p}`);
    }
    expect(
      Object.keys(
        doc.body.paths['/api/auth/signup'].post.requestBody.content['application/json'].schema.properties,
      ).sort(),
    ).toEqual(['email', 'name', 'password']);
  });

  it('an expired session is refused for access and refresh', async () => {
    const s = await signup({ email: uniqueEmail('exp'), password: 'password-1' });
    await t.deps.db.query(`update auth.sessions set expires_at = now() - interval '1 second' where user_id = $1`, [
      s.body.user.id,
    ]);
    expectError(await call(t, 'GET', '/api/auth/user', { token: s.body.accessToken }), 401, 'AUTH_UNAUTHORIZED');
    expectError(
      await call(t, 'POST', '/api/auth/refresh', { body: { refreshToken: s.body.refreshToken } }),
      401,
      'INVALID_REFRESH_TOKEN',
    );
  });
});

describe('TOKEN_TTL', () => {
  it('sets the access token lifetime', async () => {
    const t = await startApp('embedded', { TOKEN_TTL: '60' });
    try {
      const a = await call(t, 'POST', '/api/auth/signup', {
        body: { email: uniqueEmail('ttl'), password: 'password-1' },
      });
      const payload = JSON.parse(Buffer.from(a.body.accessToken.split('.')[1], 'base64url').toString());
      expect(payload.exp - payload.iat).toBe(60);
    } finally {
      await t.close();
    }
  });
});
