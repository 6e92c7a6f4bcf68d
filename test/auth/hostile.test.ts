import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { expectError, uniqueEmail } from './util.js';

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

describe.each(backends())('auth under hostile input (%s)', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp(backend);
  });
  afterAll(async () => {
    await t?.close();
  });

  async function sign(
    claims: Record<string, unknown>,
    opts: { secret?: string; alg?: string; exp?: number; iss?: string } = {},
  ): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT(claims)
      .setProtectedHeader({ alg: opts.alg ?? 'HS256', typ: 'JWT' })
      .setIssuer(opts.iss ?? 'plinth')
      .setIssuedAt(now - 60)
      .setExpirationTime(opts.exp ?? now + 600)
      .sign(new TextEncoder().encode(opts.secret ?? t.deps.credentials.jwtSecret));
  }

  it('refuses every kind of bad access token with 401 on GET /api/auth/user and on sign-out', async () => {
    const u = await createTestUser(t);
    const good = { sub: u.userId, email: u.email, role: 'authenticated', sid: u.sessionId };
    const [h, p, s] = u.token.split('.');
    const forgedPayload = b64({
      ...JSON.parse(Buffer.from(p!, 'base64url').toString()),
      sub: '00000000-0000-4000-8000-000000000000',
    });
    const now = Math.floor(Date.now() / 1000);
    const tokens: Record<string, string> = {
      garbage: 'not-a-token',
      'three dots': '...',
      'bad base64': 'a$b.c$d.e$f',
      'header only': h!,
      'alg none': `${b64({ alg: 'none', typ: 'JWT' })}.${p}.`,
      'alg none, no dot': `${b64({ alg: 'none', typ: 'JWT' })}.${p}`,
      'forged payload, old signature': `${h}.${forgedPayload}.${s}`,
      'signature stripped': `${h}.${p}.`,
      'another secret': await sign(good, { secret: 'x'.repeat(48) }),
      'admin role, another secret': await sign({ ...good, role: 'project_admin' }, { secret: 'y'.repeat(48) }),
      HS512: await sign(good, { alg: 'HS512' }),
      expired: await sign(good, { exp: now - 5 }),
      'wrong issuer': await sign(good, { iss: 'someone-else' }),
      'missing sid': await sign({ sub: u.userId, email: u.email, role: 'authenticated' }),
      'sid of no session': await sign({ ...good, sid: '00000000-0000-4000-8000-000000000000' }),
      'sid of another user': await sign({ ...good, sub: (await createTestUser(t)).userId }),
      'non-uuid sub': await sign({ ...good, sub: "1' or '1'='1" }),
      'unknown role': await sign({ ...good, role: 'service_role' }),
      'huge token': 'a'.repeat(8000),
      // One token, one spelling: padding or stray low bits decode to the same bytes in jose.
      'padded signature': `${u.token}=`,
      'padded payload': `${h}.${p}=.${s}`,
      'signature with stray bits': `${h}.${p}.${s!.slice(0, -1)}${String.fromCharCode(s!.charCodeAt(s!.length - 1) ^ 1)}`,
    };
    for (const [name, token] of Object.entries(tokens)) {
      const me = await call(t, 'GET', '/api/auth/user', { token });
      expect(me.status, name).toBe(401);
      // Expired or of an ended/unknown session: the code clients refresh on; anything else is invalid.
      const ended = ['expired', 'sid of no session', 'sid of another user'].includes(name);
      expect(me.body.error, name).toMatch(ended ? /^AUTH_UNAUTHORIZED$/ : /^(INVALID_TOKEN|UNAUTHORIZED)$/);
      const out = await call(t, 'POST', '/api/auth/signout', { token });
      expect(out.status, name).toBe(401);
    }
    // The real token still works, so the refusals above were about the tokens.
    expect((await call(t, 'GET', '/api/auth/user', { token: u.token })).status).toBe(200);
  });

  it('a token of a deleted user is refused (401), and its refresh token too', async () => {
    const email = uniqueEmail('del');
    const s = await call(t, 'POST', '/api/auth/signup', { body: { email, password: 'password-1' } });
    const del = await call(t, 'DELETE', `/api/auth/users/${s.body.user.id}`, { headers: { 'x-api-key': t.adminKey } });
    expect(del.status).toBe(200);
    expectError(await call(t, 'GET', '/api/auth/user', { token: s.body.accessToken }), 401, 'AUTH_UNAUTHORIZED');
    expectError(
      await call(t, 'POST', '/api/auth/refresh', { body: { refreshToken: s.body.refreshToken } }),
      401,
      'INVALID_REFRESH_TOKEN',
    );
    expectError(
      await call(t, 'POST', '/api/auth/signin', { body: { email, password: 'password-1' } }),
      401,
      'INVALID_CREDENTIALS',
    );
  });

  it('a wrong key next to a valid token is 401: every credential sent must be valid', async () => {
    const u = await createTestUser(t);
    for (const headers of [{ 'x-api-key': 'ik_wrong' }, { apikey: 'anon_wrong' }, { apikey: 'garbage' }] as Array<
      Record<string, string>
    >) {
      expectError(await call(t, 'GET', '/api/auth/user', { token: u.token, headers }), 401);
    }
    expect((await call(t, 'GET', '/api/auth/user', { token: u.token, headers: { apikey: t.anonKey } })).status).toBe(
      200,
    );
  });

  it('an Authorization header that is not "Bearer <token>" is 401, never treated as anon', async () => {
    for (const authorization of ['Basic dXNlcjpwYXNz', 'Bearer', 'Bearer a b', 'token abc']) {
      const a = await call(t, 'GET', '/api/auth/user', { headers: { authorization } });
      expectError(a, 401);
    }
  });

  const ENDPOINTS = [
    '/api/auth/signup',
    '/api/auth/signin',
    '/api/auth/refresh',
    '/api/auth/signout',
    '/api/auth/email/send-verification',
    '/api/auth/email/verify',
    '/api/auth/email/send-reset-password',
    '/api/auth/email/reset-password',
    '/api/auth/mfa/challenge',
    '/api/auth/magic-link',
    '/api/auth/magic-link/verify',
  ];
  const BODIES: Array<[string, { raw?: string; body?: unknown; headers?: Record<string, string> }]> = [
    ['invalid JSON', { raw: '{"email":' }],
    ['a JSON array', { body: [] }],
    ['a JSON string', { body: 'email' }],
    ['JSON null', { raw: 'null' }],
    [
      'numbers for strings',
      { body: { email: 1, password: 12345678, code: 123456, newPassword: 12345678, refreshToken: 5 } },
    ],
    [
      'booleans for strings',
      { body: { email: true, password: true, code: true, newPassword: true, refreshToken: true } },
    ],
    ['nulls', { body: { email: null, password: null, code: null, newPassword: null, refreshToken: null } }],
    [
      'objects',
      { body: { email: { $gt: '' }, password: { $gt: '' }, code: { $gt: '' }, newPassword: {}, refreshToken: {} } },
    ],
    ['prototype pollution', { raw: '{"__proto__":{"admin":true},"email":"a@example.com","password":"password-1"}' }],
    [
      'constructor pollution',
      { raw: '{"constructor":{"prototype":{"admin":true}},"email":"a@example.com","password":"password-1"}' },
    ],
    ['a huge body', { body: { email: 'a@example.com', password: 'p'.repeat(200_000) } }],
    ['a body over the server limit', { raw: JSON.stringify({ email: 'x'.repeat(2 * 1024 * 1024) }) }],
    [
      'a form body',
      {
        raw: 'email=a%40example.com&password=password-1',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      },
    ],
    [
      'NUL bytes',
      {
        body: {
          email: 'a\u0000@example.com',
          password: 'pass\u0000word',
          code: '12\u00003456',
          newPassword: 'pass\u0000word-1',
          refreshToken: 'rt_\u0000',
        },
      },
    ],
  ];

  it('no hostile body gets a 500 or a 2xx from any auth endpoint; each gets the error envelope', async () => {
    for (const path of ENDPOINTS) {
      for (const [name, req] of BODIES) {
        const a = await call(t, 'POST', path, req);
        const label = `${path} with ${name}: ${a.status} ${JSON.stringify(a.body).slice(0, 200)}`;
        expect(a.status, label).toBeGreaterThanOrEqual(400);
        expect(a.status, label).toBeLessThan(500);
        expect(a.body, label).toMatchObject({
          statusCode: a.status,
          error: expect.any(String),
          message: expect.any(String),
          nextActions: expect.any(String),
        });
      }
    }
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it('the signed-in endpoints of MFA and anonymous conversion answer hostile bodies with a 4xx envelope', async () => {
    const u = await createTestUser(t);
    const f = await call(t, 'POST', '/api/auth/mfa/factors', { token: u.token, body: {} });
    for (const path of [
      `/api/auth/mfa/factors/${f.body.id}/verify`,
      '/api/auth/anonymous/convert',
      '/api/auth/anonymous/link',
    ]) {
      for (const [name, req] of BODIES) {
        const a = await call(t, 'POST', path, { ...req, token: u.token });
        const label = `${path} with ${name}: ${a.status} ${JSON.stringify(a.body).slice(0, 200)}`;
        expect(a.status, label).toBeGreaterThanOrEqual(400);
        expect(a.status, label).toBeLessThan(500);
        expect(a.body, label).toMatchObject({
          statusCode: a.status,
          error: expect.any(String),
          message: expect.any(String),
          nextActions: expect.any(String),
        });
      }
    }
  });

  it('huge bodies are 413 PAYLOAD_TOO_LARGE', async () => {
    const a = await call(t, 'POST', '/api/auth/signin', {
      body: { email: 'a@example.com', password: 'p'.repeat(200_000) },
    });
    expectError(a, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('wrong types are refused, not coerced (an array password is not a password)', async () => {
    const email = uniqueEmail('types');
    const a = await call(t, 'POST', '/api/auth/signup', { body: { email, password: ['password-1'] } });
    expectError(a, 400, 'INVALID_INPUT');
    expect(a.body.message).toContain('password');
    const n = await call(t, 'POST', '/api/auth/signup', { body: { email, password: 12345678 } });
    expectError(n, 400, 'INVALID_INPUT');
  });

  it('admin endpoints refuse users, anon and nobody, and bad ids are 400 not 500', async () => {
    const u = await createTestUser(t);
    for (const [path, method] of [
      ['/api/auth/users', 'GET'],
      [`/api/auth/users/${u.userId}`, 'GET'],
      [`/api/auth/users/${u.userId}`, 'DELETE'],
    ] as const) {
      expectError(await call(t, method, path), 401, 'UNAUTHORIZED');
      expectError(await call(t, method, path, { headers: { apikey: t.anonKey } }), 403, 'FORBIDDEN');
      expectError(await call(t, method, path, { headers: u.auth }), 403, 'FORBIDDEN');
      expectError(
        await call(t, method, path, { headers: { 'x-api-key': `ik_${'0'.repeat(64)}` } }),
        401,
        'INVALID_API_KEY',
      );
    }
    // Still there after all those refusals.
    expect((await call(t, 'GET', `/api/auth/users/${u.userId}`, { headers: { 'x-api-key': t.adminKey } })).status).toBe(
      200,
    );
    const admin = { 'x-api-key': t.adminKey };
    for (const id of ['not-a-uuid', "1'%20or%20'1'='1", '0'.repeat(2000)]) {
      const a = await call(t, 'GET', `/api/auth/users/${id}`, { headers: admin });
      expectError(a, 400, 'INVALID_INPUT');
    }
    for (const q of ['limit=0', 'limit=1001', 'limit=abc', 'offset=-1', 'offset=1e99', `search=${'x'.repeat(400)}`]) {
      expectError(await call(t, 'GET', `/api/auth/users?${q}`, { headers: admin }), 400, 'INVALID_INPUT');
    }
  });
});
