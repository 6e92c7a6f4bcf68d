import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { USER_SHAPE, expectError, uniqueEmail } from './util.js';

describe.each(backends())('admin user management (%s)', (backend) => {
  let t: TestApp;
  let admin: Record<string, string>;
  beforeAll(async () => {
    t = await startApp(backend);
    admin = { 'x-api-key': t.adminKey };
  });
  afterAll(async () => {
    await t?.close();
  });

  it("sets a user's name and verified mark, and lists their live sessions and identities (the dashboard's user panel)", async () => {
    const u = await createTestUser(t);
    await t.deps.db.query(`update auth.users set email_verified = false where id = $1`, [u.userId]);
    await t.deps.db.query(
      `insert into auth.identities (user_id, provider, subject, email) values ($1, 'github', '42', $2)`,
      [u.userId, u.email],
    );
    await t.deps.db.query(
      `insert into auth.sessions (user_id, expires_at, revoked_at) values ($1, now() + interval '1 day', now())`,
      [u.userId],
    );
    const named = await call(t, 'PATCH', `/api/auth/users/${u.userId}`, { headers: admin, body: { name: 'Grace' } });
    expect([named.status, named.body.user.profile.name, named.body.user.emailVerified]).toEqual([200, 'Grace', false]);
    const verified = await call(t, 'PATCH', `/api/auth/users/${u.userId}`, {
      headers: admin,
      body: { emailVerified: true },
    });
    expect(verified.body.user).toMatchObject({ emailVerified: true, profile: { name: 'Grace' } });
    const sessions = await call(t, 'GET', `/api/auth/users/${u.userId}/sessions`, { headers: admin });
    expect(sessions.body.sessions.map((s: { id: string }) => s.id)).toEqual([u.sessionId]); // the revoked one is not live
    const ids = await call(t, 'GET', `/api/auth/users/${u.userId}/identities`, { headers: admin });
    expect(ids.body.identities).toEqual([{ provider: 'github', email: u.email, lastSignInAt: expect.any(String) }]);
    expectError(await call(t, 'PATCH', `/api/auth/users/${u.userId}`, { headers: admin, body: {} }), 400);
    expectError(
      await call(t, 'PATCH', `/api/auth/users/${u.userId}`, { headers: admin, body: { emailVerified: false } }),
      400,
    );
    expectError(
      await call(t, 'GET', `/api/auth/users/${crypto.randomUUID()}/sessions`, { headers: admin }),
      404,
      'USER_NOT_FOUND',
    );
    expectError(await call(t, 'GET', `/api/auth/users/${u.userId}/identities`, { headers: u.auth }), 403);
    expectError(await call(t, 'PATCH', `/api/auth/users/${u.userId}`, { headers: u.auth, body: { name: 'x' } }), 403);
  });

  it('lists users in pages with {data, pagination: {offset, limit, total}}', async () => {
    const tag = `page${Date.now().toString(36)}`;
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await createTestUser(t, `${tag}-${i}@example.com`));
    const all = await call(t, 'GET', '/api/auth/users', { headers: admin });
    expect(all.status).toBe(200);
    expect(all.body.pagination).toEqual({ offset: 0, limit: 100, total: all.body.data.length });
    expect(all.body.data.length).toBeGreaterThanOrEqual(5);
    for (const u of all.body.data) expect(u).toEqual(USER_SHAPE);

    const p1 = await call(t, 'GET', `/api/auth/users?search=${tag}&limit=2`, { headers: admin });
    const p2 = await call(t, 'GET', `/api/auth/users?search=${tag}&limit=2&offset=2`, { headers: admin });
    const p3 = await call(t, 'GET', `/api/auth/users?search=${tag}&limit=2&offset=4`, { headers: admin });
    const past = await call(t, 'GET', `/api/auth/users?search=${tag}&limit=2&offset=10`, { headers: admin });
    expect(p1.body.pagination).toEqual({ offset: 0, limit: 2, total: 5 });
    expect(p3.body.pagination).toEqual({ offset: 4, limit: 2, total: 5 });
    expect(past.body).toEqual({ data: [], pagination: { offset: 10, limit: 2, total: 5 } });
    const emails = [...p1.body.data, ...p2.body.data, ...p3.body.data].map((u: { email: string }) => u.email);
    expect(emails).toEqual(made.map((m) => m.email));
    // search is a literal substring, not a pattern.
    const pct = await call(t, 'GET', `/api/auth/users?search=${encodeURIComponent('%')}`, { headers: admin });
    expect(pct.body.pagination.total).toBe(0);
  });

  it('gets one user; an unknown id is 404 USER_NOT_FOUND', async () => {
    const email = uniqueEmail('one');
    const s = await call(t, 'POST', '/api/auth/signup', { body: { email, password: 'password-1', name: 'One' } });
    const one = await call(t, 'GET', `/api/auth/users/${s.body.user.id}`, { headers: admin });
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ user: s.body.user });
    expectError(
      await call(t, 'GET', '/api/auth/users/00000000-0000-4000-8000-000000000000', { headers: admin }),
      404,
      'USER_NOT_FOUND',
    );
  });

  it('deletes a user: its sessions end at once, the email is free again; deleting twice is 404', async () => {
    const email = uniqueEmail('gone');
    const s = await call(t, 'POST', '/api/auth/signup', { body: { email, password: 'password-1' } });
    expect((await call(t, 'GET', '/api/auth/user', { token: s.body.accessToken })).status).toBe(200);
    const del = await call(t, 'DELETE', `/api/auth/users/${s.body.user.id}`, { headers: admin });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ message: expect.any(String) });
    expectError(await call(t, 'GET', '/api/auth/user', { token: s.body.accessToken }), 401, 'AUTH_UNAUTHORIZED');
    expectError(await call(t, 'GET', `/api/auth/users/${s.body.user.id}`, { headers: admin }), 404, 'USER_NOT_FOUND');
    expectError(
      await call(t, 'DELETE', `/api/auth/users/${s.body.user.id}`, { headers: admin }),
      404,
      'USER_NOT_FOUND',
    );
    const { rows } = await t.deps.db.query('select 1 from auth.sessions where user_id = $1', [s.body.user.id]);
    expect(rows).toHaveLength(0);
    expect((await call(t, 'POST', '/api/auth/signup', { body: { email, password: 'password-2' } })).status).toBe(200);
  });

  it('admin endpoints also accept the admin key as a Bearer token', async () => {
    const a = await call(t, 'GET', '/api/auth/users?limit=1', { headers: { authorization: `Bearer ${t.adminKey}` } });
    expect(a.status).toBe(200);
    expect(a.body.data).toHaveLength(1);
  });
});
