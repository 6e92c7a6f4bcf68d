import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenSigner } from '../../src/auth/tokens.js';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { call } from '../helpers/http.js';
import { admin, sql } from '../database/helpers.js';
import { expectError } from './util.js';

// Verified tokens are kept until they expire (src/auth/identity.ts): a kept token must be
// refused exactly where a token checked afresh is.
describe.each(backends())('verified tokens, kept (%s)', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp(backend);
    const r = await call(t, 'POST', '/api/database/tables', {
      headers: admin(t),
      body: { tableName: 'kept', rlsEnabled: true, columns: [{ name: 'v', type: 'integer', nullable: true }] },
    });
    expect(r.status).toBe(201);
    await sql(t, 'create policy all_read on public.kept for select to authenticated using (true)');
  });
  afterAll(async () => {
    await t?.close();
  });

  const read = (token: string) => call(t, 'GET', '/api/db/kept?v=eq.1', { token });
  const me = (token: string) => call(t, 'GET', '/api/auth/user', { token });

  it('refuses a kept token once its session is signed out, on reads and elsewhere', async () => {
    const u = await createTestUser(t);
    expect((await read(u.token)).status).toBe(200);
    expect((await me(u.token)).status).toBe(200);
    expect((await call(t, 'POST', '/api/auth/signout', { token: u.token })).status).toBe(200);
    expectError(await read(u.token), 401, 'AUTH_UNAUTHORIZED');
    expectError(await me(u.token), 401, 'AUTH_UNAUTHORIZED');
  });

  it('refuses a kept token once its user is deleted', async () => {
    const u = await createTestUser(t);
    expect((await read(u.token)).status).toBe(200);
    await t.deps.db.query('delete from auth.users where id = $1', [u.userId]);
    expectError(await read(u.token), 401, 'AUTH_UNAUTHORIZED');
    expectError(await me(u.token), 401, 'AUTH_UNAUTHORIZED');
  });

  it('refuses a kept token once it has expired', async () => {
    const u = await createTestUser(t);
    const short = new TokenSigner(t.deps.credentials.jwtSecret, 1);
    const token = await short.sign({ sub: u.userId, email: u.email, role: 'authenticated', sid: u.sessionId });
    const { exp } = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { exp: number };
    expect((await read(token)).status).toBe(200);
    await new Promise((r) => setTimeout(r, Math.max(0, exp * 1000 - Date.now()) + 50));
    const r = await read(token);
    expectError(r, 401, 'AUTH_UNAUTHORIZED');
    expect(r.body.message).toBe('The access token has expired.');
    expectError(await me(token), 401, 'AUTH_UNAUTHORIZED');
  });

  it("never takes another token for a kept one (a kept token's signature on other claims)", async () => {
    const u = await createTestUser(t);
    const other = await createTestUser(t);
    expect((await read(u.token)).status).toBe(200);
    const [header, , signature] = u.token.split('.');
    const claims = JSON.parse(Buffer.from(u.token.split('.')[1]!, 'base64url').toString());
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: other.userId, sid: other.sessionId })).toString('base64url')}.${signature}`;
    expectError(await read(forged), 401, 'INVALID_TOKEN');
  });
});
