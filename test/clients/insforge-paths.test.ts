import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { call } from '../helpers/http.js';
import { startStorageApp, type StorageTestApp } from '../storage/helpers.js';
import { expectError, uniqueEmail } from '../auth/util.js';
import { signedInClient } from './helpers.js';

// The InsForge SDK's extra paths over raw HTTP: bad input is a clear 4xx and changes nothing.
describe.each(backends())('InsForge SDK paths, bad input (%s)', (backend) => {
  let t: StorageTestApp;
  let user: Awaited<ReturnType<typeof signedInClient>>;
  beforeAll(async () => {
    t = await startStorageApp(backend, 'local');
    await t.createBucket('edge', true);
    user = await signedInClient(t, 'edge');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('sign-in and sign-up bodies are checked', async () => {
    const email = user.email;
    const cases: Array<[unknown, string]> = [
      [{ email }, 'INVALID_INPUT'],
      [{ email, method: 'otp' }, 'INVALID_INPUT'],
      [{ email, password: 'x', method: 'magic' }, 'INVALID_INPUT'],
      [{ email, otp: '12345' }, 'INVALID_INPUT'],
      [{ password: 'password-1' }, 'INVALID_INPUT'],
    ];
    for (const [body, code] of cases) expectError(await call(t, 'POST', '/api/auth/sessions', { body }), 400, code);
    expectError(
      await call(t, 'POST', '/api/auth/sessions', { body: { email, otp: '123456', method: 'otp' } }),
      400,
      'INVALID_CODE',
    );
    expectError(
      await call(t, 'POST', '/api/auth/users', { body: { email: uniqueEmail('short'), password: 'short' } }),
      400,
      'INVALID_INPUT',
    );
    expectError(
      await call(t, 'POST', '/api/auth/users', {
        headers: { 'x-api-key': t.adminKey },
        body: { email, password: 'password-1' },
      }),
      409,
      'ALREADY_EXISTS',
    );
    expectError(
      await call(t, 'POST', '/api/auth/users', {
        token: 'anon_wrong',
        body: { email: uniqueEmail('w'), password: 'password-1' },
      }),
      401,
      'INVALID_API_KEY',
    );
  });

  it('profiles: the body is checked, the id must be a uuid, a profile needs a user', async () => {
    const patch = (body: unknown, token = user.accessToken) =>
      call(t, 'PATCH', '/api/auth/profiles/current', { token, body });
    expectError(await patch({ profile: { name: 5 } }), 400, 'INVALID_INPUT');
    expectError(await patch({ profile: { avatar_url: ['x'] } }), 400, 'INVALID_INPUT');
    expectError(await patch({ profile: 'x' }), 400, 'INVALID_INPUT');
    expectError(
      await patch({ profile: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])) }),
      400,
      'INVALID_INPUT',
    );
    expectError(await call(t, 'PATCH', '/api/auth/profiles/current', { body: { profile: {} } }), 401, 'UNAUTHORIZED');
    expectError(await patch({ profile: { name: 'x' } }, t.anonKey), 403, 'FORBIDDEN');
    // Nothing above changed the profile.
    const got = await call(t, 'GET', `/api/auth/profiles/${user.user.id}`, { token: t.anonKey });
    expect(got.body).toEqual({ id: user.user.id, profile: { name: 'edge' } });
    expectError(await call(t, 'GET', '/api/auth/profiles/not-a-uuid', { token: t.anonKey }), 400, 'INVALID_INPUT');
    expectError(await call(t, 'GET', `/api/auth/profiles/${user.user.id}`), 401, 'UNAUTHORIZED');
    expectError(await call(t, 'GET', '/api/auth/sessions/current'), 401, 'UNAUTHORIZED');
  });

  it('refresh takes either spelling; reset-password needs email+code or a reset token', async () => {
    const fresh = await signedInClient(t, 'edge-rt');
    const r = await call(t, 'POST', '/api/auth/refresh?client_type=mobile', {
      token: 'anything-at-all',
      body: { refresh_token: fresh.refreshToken },
    });
    expect(r.status).toBe(200);
    expect(r.body.refreshToken).toMatch(/^rt_/);
    expectError(await call(t, 'POST', '/api/auth/refresh'), 400, 'INVALID_INPUT');
    expectError(
      await call(t, 'POST', '/api/auth/email/reset-password', { body: { newPassword: 'password-2' } }),
      400,
      'INVALID_INPUT',
    );
    expectError(
      await call(t, 'POST', '/api/auth/email/reset-password', {
        body: { newPassword: 'password-2', otp: 'rpt_garbage' },
      }),
      400,
      'INVALID_CODE',
    );
    expectError(
      await call(t, 'POST', '/api/auth/email/reset-password', {
        body: { email: fresh.email, newPassword: 'password-2' },
      }),
      400,
      'INVALID_INPUT',
    );
    expectError(
      await call(t, 'POST', '/api/auth/email/exchange-reset-password-token', {
        body: { email: fresh.email, code: '123456' },
      }),
      400,
      'INVALID_CODE',
    );
    // The password is unchanged.
    expect(
      (await call(t, 'POST', '/api/auth/sessions', { body: { email: fresh.email, password: fresh.password } })).status,
    ).toBe(200);
  });

  it('batch delete: the body is checked before anything is deleted; access as for single deletes', async () => {
    const put = await t.upload('edge', {
      key: 'keep.txt',
      data: 'k',
      headers: { authorization: `Bearer ${user.accessToken}` },
    });
    expect(put.status).toBe(200);
    const del = (body: unknown, opts: { token?: string; raw?: string } = { token: user.accessToken }) =>
      call(t, 'DELETE', '/api/storage/buckets/edge/objects', { ...opts, body });
    expectError(await del({ keys: [] }), 400, 'INVALID_INPUT');
    expectError(await del({ keys: [1] }), 400, 'INVALID_INPUT');
    expectError(await del({ keys: Array.from({ length: 1001 }, (_, i) => `k${i}`) }), 400, 'INVALID_INPUT');
    expectError(await del({ keys: ['keep.txt', 'a/../b'] }), 400, 'INVALID_KEY');
    expectError(await del(['keep.txt']), 400, 'INVALID_INPUT');
    expectError(await del({ keys: ['keep.txt'] }, { token: t.anonKey }), 403, 'FORBIDDEN');
    expectError(await del({ keys: ['keep.txt'] }, {}), 401, 'UNAUTHORIZED');
    expectError(
      await call(t, 'DELETE', '/api/storage/buckets/nope/objects', {
        token: user.accessToken,
        body: { keys: ['keep.txt'] },
      }),
      404,
      'BUCKET_NOT_FOUND',
    );
    expect((await t.fetch('/api/storage/buckets/edge/objects/keep.txt')).status).toBe(200);
  });

  it('GET download-strategy checks expiresIn and answers a missing object with 404', async () => {
    const put = await t.upload('edge', {
      key: 'dir/file name.txt',
      data: 'x',
      headers: { authorization: `Bearer ${user.accessToken}` },
    });
    expect(put.status).toBe(200);
    const path = '/api/storage/buckets/edge/download-strategy/objects/dir%2Ffile%20name.txt';
    const ok = await call(t, 'GET', path);
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ method: 'direct', url: `${t.url}/api/storage/buckets/edge/objects/dir/file%20name.txt` });
    for (const q of ['0', '604801', 'soon'])
      expectError(await call(t, 'GET', `${path}?expiresIn=${q}`), 400, 'INVALID_INPUT');
    expectError(
      await call(t, 'GET', '/api/storage/buckets/edge/download-strategy/objects/missing.txt'),
      404,
      'OBJECT_NOT_FOUND',
    );
  });
});
