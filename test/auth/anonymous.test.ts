import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { sql } from '../database/helpers.js';
import { USER_SHAPE, claimsOf, expectError, uniqueEmail } from './util.js';

describe.each(backends())('anonymous sign-in (%s)', (backend) => {
  let t: TestApp;
  let ipN = 0;
  // Each test plays its own client address (the limit is per IP).
  const nextIp = () => `10.9.${Math.floor(++ipN / 250)}.${ipN % 250}`;
  beforeAll(async () => {
    t = await startApp(backend, { AUTH_ANONYMOUS_SIGNIN: 'true', TRUST_PROXY: 'true' });
    await sql(
      t,
      `create table public.carts (id serial primary key, owner uuid not null default auth.uid(), item text)`,
    );
    await sql(t, `grant select, insert on public.carts to authenticated`);
    await sql(t, `grant usage on all sequences in schema public to authenticated`);
    await sql(t, `alter table public.carts enable row level security`);
    await sql(
      t,
      `create policy own on public.carts for all to authenticated using (owner = auth.uid()) with check (owner = auth.uid())`,
    );
    // Reviews only by permanent accounts: RLS reads is_anonymous from the token.
    await sql(
      t,
      `create table public.reviews (id serial primary key, owner uuid not null default auth.uid(), body text)`,
    );
    await sql(t, `grant select, insert on public.reviews to authenticated`);
    await sql(t, `grant usage on all sequences in schema public to authenticated`);
    await sql(t, `alter table public.reviews enable row level security`);
    await sql(
      t,
      `create policy permanent on public.reviews for insert to authenticated with check ((auth.jwt()->>'is_anonymous')::boolean is false)`,
    );
  });
  afterAll(async () => {
    await t?.close();
  });

  const anonymous = (ip = nextIp()) =>
    call(t, 'POST', '/api/auth/signin/anonymous', { headers: { 'x-forwarded-for': ip } });
  const admin = { 'x-api-key': '' };

  it('answers a user with isAnonymous and a token with is_anonymous and role authenticated', async () => {
    const a = await anonymous();
    expect(a.status, a.text).toBe(200);
    expect(a.body).toEqual({
      user: { ...USER_SHAPE, email: '', providers: [], isAnonymous: true },
      accessToken: expect.any(String),
      refreshToken: expect.any(String),
    });
    expect(claimsOf(a.body.accessToken)).toMatchObject({
      role: 'authenticated',
      is_anonymous: true,
      aal: 'aal1',
      amr: [{ method: 'anonymous' }],
      email: '',
    });
    expect((await call(t, 'GET', '/api/auth/user', { token: a.body.accessToken })).body.user).toMatchObject({
      id: a.body.user.id,
      isAnonymous: true,
    });
    // A refresh keeps it anonymous.
    const r = await call(t, 'POST', '/api/auth/refresh', { body: { refreshToken: a.body.refreshToken } });
    expect(claimsOf(r.body.accessToken).is_anonymous).toBe(true);
    // RLS tells anonymous users apart.
    expect(
      (await call(t, 'POST', '/api/database/records/carts', { token: a.body.accessToken, body: [{ item: 'tea' }] }))
        .status,
    ).toBe(201);
    expect(
      (await call(t, 'POST', '/api/database/records/reviews', { token: a.body.accessToken, body: [{ body: 'meh' }] }))
        .status,
    ).toBe(403);
  });

  it('is limited per IP (429 after 30 an hour)', async () => {
    const ip = nextIp();
    for (let i = 0; i < 30; i++) expect((await anonymous(ip)).status).toBe(200);
    const blocked = await anonymous(ip);
    expectError(blocked, 429, 'RATE_LIMITED');
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await anonymous()).status).toBe(200);
  });

  it('converts to a permanent account with an email and password, keeping the id and the data', async () => {
    const a = await anonymous();
    const token = a.body.accessToken;
    await call(t, 'POST', '/api/database/records/carts', { token, body: [{ item: 'cake' }] });
    const email = uniqueEmail('conv');
    const c = await call(t, 'POST', '/api/auth/anonymous/convert', {
      token,
      body: { email, password: 'password-1', name: 'Cy' },
    });
    expect(c.status, c.text).toBe(200);
    expect(c.body).toEqual({
      user: {
        ...USER_SHAPE,
        id: a.body.user.id,
        email,
        providers: ['email'],
        isAnonymous: false,
        profile: { name: 'Cy' },
      },
      accessToken: expect.any(String),
      refreshToken: expect.any(String),
      requireEmailVerification: false,
    });
    expect(claimsOf(c.body.accessToken)).toMatchObject({ sub: a.body.user.id, is_anonymous: false, email });
    // The anonymous session ended; the data stayed with the same id.
    expectError(await call(t, 'GET', '/api/auth/user', { token }), 401, 'AUTH_UNAUTHORIZED');
    const s = await call(t, 'POST', '/api/auth/signin', { body: { email, password: 'password-1' } });
    expect(s.body.user.id).toBe(a.body.user.id);
    const carts = await call(t, 'GET', '/api/database/records/carts', { token: s.body.accessToken });
    expect(carts.body.map((r: { item: string }) => r.item)).toEqual(['cake']);
    expect(
      (await call(t, 'POST', '/api/database/records/reviews', { token: s.body.accessToken, body: [{ body: 'good' }] }))
        .status,
    ).toBe(201);
    // Converting twice, or a permanent account, is refused.
    expectError(
      await call(t, 'POST', '/api/auth/anonymous/convert', {
        token: s.body.accessToken,
        body: { email: uniqueEmail('x'), password: 'password-2' },
      }),
      409,
      'NOT_ANONYMOUS',
    );
  });

  it('conversion to a taken email is a 409 and the user stays anonymous; bad input is a 400', async () => {
    const taken = uniqueEmail('taken');
    await call(t, 'POST', '/api/auth/signup', { body: { email: taken, password: 'password-1' } });
    const a = await anonymous();
    const token = a.body.accessToken;
    expectError(
      await call(t, 'POST', '/api/auth/anonymous/convert', {
        token,
        body: { email: taken.toUpperCase(), password: 'password-1' },
      }),
      409,
      'ALREADY_EXISTS',
    );
    expectError(
      await call(t, 'POST', '/api/auth/anonymous/convert', {
        token,
        body: { email: 'not-an-email', password: 'password-1' },
      }),
      400,
      'INVALID_INPUT',
    );
    expectError(
      await call(t, 'POST', '/api/auth/anonymous/convert', {
        token,
        body: { email: uniqueEmail(), password: 'short' },
      }),
      400,
      'INVALID_INPUT',
    );
    expectError(
      await call(t, 'POST', '/api/auth/anonymous/convert', { body: { email: uniqueEmail(), password: 'password-1' } }),
      401,
      'UNAUTHORIZED',
    );
    expect((await call(t, 'GET', '/api/auth/user', { token })).body.user).toMatchObject({
      isAnonymous: true,
      email: '',
    });
  });

  it('admin cleanup deletes anonymous users older than N days, and nobody else', async () => {
    const old = await anonymous();
    const recent = await anonymous();
    const permanent = await call(t, 'POST', '/api/auth/signup', {
      body: { email: uniqueEmail('perm'), password: 'password-1' },
    });
    await t.deps.db.query(`update auth.users set created_at = now() - interval '8 days' where id = any($1::uuid[])`, [
      [old.body.user.id, permanent.body.user.id],
    ]);
    admin['x-api-key'] = t.adminKey;
    expectError(
      await call(t, 'DELETE', '/api/auth/users/anonymous?olderThanDays=7', { token: recent.body.accessToken }),
      403,
      'FORBIDDEN',
    );
    expectError(
      await call(t, 'DELETE', '/api/auth/users/anonymous?olderThanDays=-1', { headers: admin }),
      400,
      'INVALID_INPUT',
    );
    const d = await call(t, 'DELETE', '/api/auth/users/anonymous?olderThanDays=7', { headers: admin });
    expect(d.status, d.text).toBe(200);
    expect(d.body.deleted).toBeGreaterThanOrEqual(1);
    expectError(await call(t, 'GET', `/api/auth/users/${old.body.user.id}`, { headers: admin }), 404, 'USER_NOT_FOUND');
    expectError(await call(t, 'GET', '/api/auth/user', { token: old.body.accessToken }), 401, 'AUTH_UNAUTHORIZED');
    expect((await call(t, 'GET', `/api/auth/users/${recent.body.user.id}`, { headers: admin })).status).toBe(200);
    expect((await call(t, 'GET', `/api/auth/users/${permanent.body.user.id}`, { headers: admin })).status).toBe(200);
  });
});

describe('anonymous sign-in turned off (the default)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp('embedded');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers 403 ANONYMOUS_SIGNIN_DISABLED', async () => {
    expectError(await call(t, 'POST', '/api/auth/signin/anonymous'), 403, 'ANONYMOUS_SIGNIN_DISABLED');
  });
});
