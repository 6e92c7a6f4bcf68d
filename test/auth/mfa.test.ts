import { generateSync } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { sql } from '../database/helpers.js';
import { USER_SHAPE, claimsOf, expectError, uniqueEmail } from './util.js';

/**
 * TOTP codes relative to the time step when the test started: offset 0 and +1 stay inside
 * the server's ±1 window even if a step boundary passes during the test.
 */
function stepper(secret: string) {
  const base = Math.floor(Date.now() / 30_000) * 30;
  return (offset: number) => generateSync({ secret, epoch: base + offset * 30 + 1 });
}

describe.each(backends())('MFA with TOTP (%s)', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp(backend);
    await sql(
      t,
      `create table public.vault (id serial primary key, owner uuid not null default auth.uid(), secret text)`,
    );
    await sql(t, `grant select, insert on public.vault to authenticated`);
    await sql(t, `grant usage on all sequences in schema public to authenticated`);
    await sql(t, `alter table public.vault enable row level security`);
    // Rows of the vault only for their owner, and only at aal2.
    await sql(
      t,
      `create policy own_aal2 on public.vault for all to authenticated
      using (owner = auth.uid() and auth.jwt()->>'aal' = 'aal2') with check (owner = auth.uid() and auth.jwt()->>'aal' = 'aal2')`,
    );
  });
  afterAll(async () => {
    await t?.close();
  });

  const post = (path: string, body: unknown, token?: string) => call(t, 'POST', path, { body, token });
  const signin = (email: string) => post('/api/auth/signin', { email, password: 'password-1' });

  async function enrolled() {
    const email = uniqueEmail('mfa');
    const up = await post('/api/auth/signup', { email, password: 'password-1' });
    expect(up.status).toBe(200);
    const e = await post('/api/auth/mfa/factors', { friendlyName: 'phone' }, up.body.accessToken);
    expect(e.status, e.text).toBe(200);
    return {
      email,
      token: up.body.accessToken as string,
      userId: up.body.user.id as string,
      factor: e.body,
      code: stepper(e.body.secret),
    };
  }

  /** A user with an active factor: the aal2 session of the verification and its recovery codes. */
  async function active() {
    const u = await enrolled();
    const v = await post(`/api/auth/mfa/factors/${u.factor.id}/verify`, { code: u.code(0) }, u.token);
    expect(v.status, v.text).toBe(200);
    return { ...u, session: v.body };
  }

  it('enrols: secret, otpauth URI and an SVG QR code; the factor is unverified and does not gate sign-in yet', async () => {
    const u = await enrolled();
    expect(u.factor).toMatchObject({
      id: expect.any(String),
      type: 'totp',
      friendlyName: 'phone',
      secret: expect.stringMatching(/^[A-Z2-7]{32}$/),
    });
    expect(u.factor.uri).toMatch(/^otpauth:\/\/totp\/Plinth:.*\?.*secret=[A-Z2-7]{32}/);
    expect(u.factor.uri).toContain(encodeURIComponent(u.email));
    expect(u.factor.qrCode).toMatch(/^<svg[\s\S]*<\/svg>\s*$/);
    expect(u.factor.totp).toEqual({
      qr_code: expect.stringMatching(/^data:image\/svg\+xml/),
      secret: u.factor.secret,
      uri: u.factor.uri,
    });
    const list = await call(t, 'GET', '/api/auth/mfa/factors', { token: u.token });
    expect(list.body.factors).toEqual([
      { id: u.factor.id, type: 'totp', friendlyName: 'phone', status: 'unverified', createdAt: expect.any(String) },
    ]);
    const s = await signin(u.email);
    expect(s.body.accessToken).toEqual(expect.any(String));
    expect(claimsOf(s.body.accessToken)).toMatchObject({
      aal: 'aal1',
      amr: [{ method: 'password', timestamp: expect.any(Number) }],
      is_anonymous: false,
    });
  });

  it('verify activates the factor: a fresh aal2 session, ten recovery codes once, the old session ends', async () => {
    const u = await enrolled();
    expectError(
      await post(`/api/auth/mfa/factors/${u.factor.id}/verify`, { code: u.code(3) }, u.token),
      400,
      'INVALID_CODE',
    );
    const v = await post(`/api/auth/mfa/factors/${u.factor.id}/verify`, { code: u.code(0) }, u.token);
    expect(v.status, v.text).toBe(200);
    expect(v.body).toMatchObject({
      user: { ...USER_SHAPE, factors: [{ id: u.factor.id, status: 'verified' }] },
      accessToken: expect.any(String),
      refreshToken: expect.any(String),
    });
    expect(v.body.recoveryCodes).toHaveLength(10);
    expect(new Set(v.body.recoveryCodes).size).toBe(10);
    const c = claimsOf(v.body.accessToken);
    expect(c.aal).toBe('aal2');
    expect(c.amr.map((a: { method: string }) => a.method)).toEqual(['password', 'totp']);
    expectError(await call(t, 'GET', '/api/auth/user', { token: u.token }), 401, 'AUTH_UNAUTHORIZED');
    // The same code again (a step-up) is refused: a code works once.
    expectError(
      await post(`/api/auth/mfa/factors/${u.factor.id}/verify`, { code: u.code(0) }, v.body.accessToken),
      400,
      'INVALID_CODE',
    );
    // A refresh keeps aal2 and the methods.
    const r = await post('/api/auth/refresh', { refreshToken: v.body.refreshToken });
    expect(claimsOf(r.body.accessToken)).toMatchObject({ aal: 'aal2', amr: c.amr });
  });

  it('enrolling ends the sessions opened before it: no aal1 session of another device stays valid or refreshes', async () => {
    const u = await enrolled();
    const other = await signin(u.email);
    expect(claimsOf(other.body.accessToken).aal).toBe('aal1');
    const v = await post(`/api/auth/mfa/factors/${u.factor.id}/verify`, { code: u.code(0) }, u.token);
    expect(v.status, v.text).toBe(200);
    expectError(await call(t, 'GET', '/api/auth/user', { token: other.body.accessToken }), 401, 'AUTH_UNAUTHORIZED');
    expect((await post('/api/auth/refresh', { refreshToken: other.body.refreshToken })).status).toBe(401);
    const live = await t.deps.db.query<{ aal: string }>(
      'select aal from auth.sessions where user_id = $1 and revoked_at is null',
      [u.userId],
    );
    expect(live.rows).toEqual([{ aal: 'aal2' }]);
    expect((await call(t, 'GET', '/api/auth/user', { token: v.body.accessToken })).status).toBe(200);
  });

  it('password sign-in answers a challenge and no tokens; the challenge and a code give aal2, once', async () => {
    const u = await active();
    const s = await signin(u.email);
    expect(s.status).toBe(200);
    expect(s.body).toEqual({
      mfaRequired: true,
      challenge: {
        token: expect.stringMatching(/^mfa_/),
        expiresAt: expect.any(String),
        factors: [{ id: u.factor.id, type: 'totp', friendlyName: 'phone' }],
      },
    });
    // The code of the verification was used: refused here too.
    expectError(
      await post('/api/auth/mfa/challenge', { token: s.body.challenge.token, factorId: u.factor.id, code: u.code(0) }),
      400,
      'INVALID_CODE',
    );
    // Sent with the client's last access token, whose session has ended: ignored, as on every sign-in path.
    const ok = await post(
      '/api/auth/mfa/challenge',
      { token: s.body.challenge.token, factorId: u.factor.id, code: u.code(1) },
      u.token,
    );
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toEqual({
      user: expect.objectContaining({ id: u.userId }),
      accessToken: expect.any(String),
      refreshToken: expect.any(String),
    });
    expect(claimsOf(ok.body.accessToken).amr.map((a: { method: string }) => a.method)).toEqual(['password', 'totp']);
    expect(claimsOf(ok.body.accessToken).aal).toBe('aal2');
    // The challenge is spent.
    const again = await post('/api/auth/mfa/challenge', {
      token: s.body.challenge.token,
      factorId: u.factor.id,
      code: u.code(1),
    });
    expectError(again, 400, 'INVALID_CODE');
    // The refresh of the aal2 session stays aal2.
    const r = await post('/api/auth/refresh', { refreshToken: ok.body.refreshToken });
    expect(claimsOf(r.body.accessToken).aal).toBe('aal2');
  });

  it('RLS can require aal2 through auth.jwt()', async () => {
    const u = await active();
    const aal2 = u.session.accessToken;
    const ins = await post('/api/database/records/vault', [{ secret: 'gold' }], aal2);
    expect(ins.status, ins.text).toBe(201);
    expect((await call(t, 'GET', '/api/database/records/vault', { token: aal2 })).body).toHaveLength(1);
    // Another user sees nothing; so does the owner at aal1 (after an admin reset of the factor).
    const up = await post('/api/auth/signup', { email: uniqueEmail('aal1'), password: 'password-1' });
    expect((await call(t, 'GET', '/api/database/records/vault', { token: up.body.accessToken })).body).toEqual([]);
    const reset = await call(t, 'DELETE', `/api/auth/users/${u.userId}/factors`, {
      headers: { 'x-api-key': t.adminKey },
    });
    expect(reset.body).toMatchObject({ deleted: 1, user: { factors: [] } });
    const own = await signin(u.email);
    expect(claimsOf(own.body.accessToken).aal).toBe('aal1');
    expect((await call(t, 'GET', '/api/database/records/vault', { token: own.body.accessToken })).body).toEqual([]);
    expect((await post('/api/database/records/vault', [{ secret: 'x' }], own.body.accessToken)).status).toBe(403);
  });

  it('recovery codes finish a sign-in once each', async () => {
    const u = await active();
    const [first] = u.session.recoveryCodes as string[];
    const s1 = await signin(u.email);
    const ok = await post('/api/auth/mfa/challenge', {
      token: s1.body.challenge.token,
      recoveryCode: first!.toUpperCase(),
    });
    expect(ok.status, ok.text).toBe(200);
    expect(claimsOf(ok.body.accessToken).amr.map((a: { method: string }) => a.method)).toEqual([
      'password',
      'recovery',
    ]);
    const s2 = await signin(u.email);
    expectError(
      await post('/api/auth/mfa/challenge', { token: s2.body.challenge.token, recoveryCode: first }),
      400,
      'INVALID_CODE',
    );
  });

  it('an expired challenge, a garbled one, a code outside ±1 step, and one attempt too many are refused', async () => {
    const u = await active();
    const s = await signin(u.email);
    await t.deps.db.query(
      `update auth.mfa_challenges set expires_at = now() - interval '1 second' where user_id = $1`,
      [u.userId],
    );
    expectError(
      await post('/api/auth/mfa/challenge', { token: s.body.challenge.token, factorId: u.factor.id, code: u.code(1) }),
      400,
      'INVALID_CODE',
    );
    expectError(
      await post('/api/auth/mfa/challenge', { token: 'mfa_nope', factorId: u.factor.id, code: u.code(1) }),
      400,
      'INVALID_CODE',
    );
    const s2 = await signin(u.email);
    expectError(
      await post('/api/auth/mfa/challenge', {
        token: s2.body.challenge.token,
        factorId: u.factor.id,
        code: u.code(-3),
      }),
      400,
      'INVALID_CODE',
    );
    expectError(
      await post('/api/auth/mfa/challenge', { token: s2.body.challenge.token, factorId: u.factor.id, code: u.code(3) }),
      400,
      'INVALID_CODE',
    );
    for (let i = 0; i < 3; i++)
      await post('/api/auth/mfa/challenge', { token: s2.body.challenge.token, factorId: u.factor.id, code: '000000' });
    // Five tries used: even the right code no longer opens this challenge.
    expectError(
      await post('/api/auth/mfa/challenge', { token: s2.body.challenge.token, factorId: u.factor.id, code: u.code(1) }),
      400,
      'INVALID_CODE',
    );
  });

  it('wrong codes are limited per user by the brute-force guard (429)', async () => {
    const u = await active();
    for (let round = 0; round < 2; round++) {
      const s = await signin(u.email);
      for (let i = 0; i < 5; i++) {
        expectError(
          await post('/api/auth/mfa/challenge', {
            token: s.body.challenge.token,
            factorId: u.factor.id,
            code: '000000',
          }),
          400,
          'INVALID_CODE',
        );
      }
    }
    const s = await signin(u.email);
    const blocked = await post('/api/auth/mfa/challenge', {
      token: s.body.challenge.token,
      factorId: u.factor.id,
      code: u.code(1),
    });
    expectError(blocked, 429, 'RATE_LIMITED');
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('unenrol needs a current code of the factor; afterwards sign-in gives a session at once', async () => {
    const u = await active();
    const path = `/api/auth/mfa/factors/${u.factor.id}`;
    const aal2 = u.session.accessToken;
    expectError(await call(t, 'DELETE', path, { token: aal2 }), 400, 'INVALID_INPUT');
    expectError(await call(t, 'DELETE', path, { token: aal2, body: { code: '000000' } }), 400, 'INVALID_CODE');
    // The code of the verification was used already.
    expectError(await call(t, 'DELETE', path, { token: aal2, body: { code: u.code(0) } }), 400, 'INVALID_CODE');
    const d = await call(t, 'DELETE', path, { token: aal2, body: { code: u.code(1) } });
    expect(d.status, d.text).toBe(200);
    const s = await signin(u.email);
    expect(s.body.accessToken).toEqual(expect.any(String));
    expect(s.body.user.factors).toEqual([]);
    // The recovery codes went with the last factor.
    expect(
      (await t.deps.db.query('select 1 from auth.mfa_recovery_codes where user_id = $1', [u.userId])).rows,
    ).toEqual([]);
  });

  it('a user with an active factor adds another only from an aal2 session', async () => {
    const email = uniqueEmail('mfa2');
    const a = await post('/api/auth/signup', { email, password: 'password-1' });
    const b = await signin(email);
    const e = await post('/api/auth/mfa/factors', {}, b.body.accessToken);
    const v = await post(
      `/api/auth/mfa/factors/${e.body.id}/verify`,
      { code: stepper(e.body.secret)(0) },
      b.body.accessToken,
    );
    expect(v.status).toBe(200);
    // Session a (another device, password only) ended with the enrolment.
    expectError(await call(t, 'GET', '/api/auth/user', { token: a.body.accessToken }), 401, 'AUTH_UNAUTHORIZED');
    // An aal1 session opened after it (as a provider sign-in opens one) may not add a factor.
    const sid = (
      await t.deps.db.query<{ id: string }>(
        `insert into auth.sessions (user_id, expires_at) values ($1, now() + interval '1 hour') returning id`,
        [a.body.user.id],
      )
    ).rows[0]!.id;
    const aal1 = await t.deps.tokens.sign({
      sub: a.body.user.id,
      email,
      role: 'authenticated',
      sid,
      aal: 'aal1',
      amr: [{ method: 'oauth', timestamp: 1 }],
    } as never);
    expect((await call(t, 'GET', '/api/auth/user', { token: aal1 })).status).toBe(200);
    expectError(await post('/api/auth/mfa/factors', {}, aal1), 403, 'AAL2_REQUIRED');
    const tablet = await post('/api/auth/mfa/factors', { friendlyName: 'tablet' }, v.body.accessToken);
    expect(tablet.status).toBe(200);
    // A second activation shows no recovery codes: the first set stays the one.
    const v2 = await post(
      `/api/auth/mfa/factors/${tablet.body.id}/verify`,
      { code: stepper(tablet.body.secret)(0) },
      v.body.accessToken,
    );
    expect(v2.status, v2.text).toBe(200);
    expect(v2.body.recoveryCodes).toBeUndefined();
    expect(v2.body.user.factors.map((f: { status: string }) => f.status)).toEqual(['verified', 'verified']);
    expect(
      (
        await post('/api/auth/mfa/challenge', {
          token: (await signin(email)).body.challenge.token,
          recoveryCode: v.body.recoveryCodes[0],
        })
      ).status,
    ).toBe(200);
  });

  it('bad input: malformed codes, unknown factors, missing parts, no credential', async () => {
    const u = await enrolled();
    const verify = `/api/auth/mfa/factors/${u.factor.id}/verify`;
    for (const code of ['12345', '1234567', 'abcdef', 123456, null])
      expectError(await post(verify, { code }, u.token), 400, 'INVALID_INPUT');
    expectError(
      await post('/api/auth/mfa/factors/00000000-0000-0000-0000-000000000000/verify', { code: '123456' }, u.token),
      404,
      'MFA_FACTOR_NOT_FOUND',
    );
    expectError(
      await post('/api/auth/mfa/factors/not-a-uuid/verify', { code: '123456' }, u.token),
      404,
      'MFA_FACTOR_NOT_FOUND',
    );
    expectError(await post(verify, { code: '123456' }), 401, 'UNAUTHORIZED');
    expectError(await post('/api/auth/mfa/factors', {}, t.adminKey), 403, 'FORBIDDEN');
    expectError(await post('/api/auth/mfa/challenge', { token: 'mfa_x' }), 400, 'INVALID_INPUT');
    expectError(await post('/api/auth/mfa/challenge', { token: 'mfa_x', code: '123456' }), 400, 'INVALID_INPUT');
    expectError(
      await post('/api/auth/mfa/challenge', {
        token: 'mfa_x',
        code: '123456',
        factorId: u.factor.id,
        recoveryCode: 'a',
      }),
      400,
      'INVALID_INPUT',
    );
    expectError(await post('/api/auth/mfa/recovery-codes', {}, u.token), 403, 'AAL2_REQUIRED');
    expectError(
      await call(t, 'DELETE', '/api/auth/users/00000000-0000-0000-0000-000000000000/factors', {
        headers: { 'x-api-key': t.adminKey },
      }),
      404,
      'USER_NOT_FOUND',
    );
  });

  it('new recovery codes from an aal2 session replace the old ones', async () => {
    const u = await active();
    const fresh = await post('/api/auth/mfa/recovery-codes', {}, u.session.accessToken);
    expect(fresh.body.recoveryCodes).toHaveLength(10);
    const s = await signin(u.email);
    expectError(
      await post('/api/auth/mfa/challenge', {
        token: s.body.challenge.token,
        recoveryCode: u.session.recoveryCodes[0],
      }),
      400,
      'INVALID_CODE',
    );
    expect(
      (
        await post('/api/auth/mfa/challenge', {
          token: s.body.challenge.token,
          recoveryCode: fresh.body.recoveryCodes[0],
        })
      ).status,
    ).toBe(200);
  });
});
