// The auth log source hears every way in, not only passwords and codes: the second factor of an
// MFA sign-in (ok and failed), and anonymous sign-ins, each with its method named.
import { generateSync } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';

describe.each(backends())('auth log: MFA and anonymous sign-ins (%s)', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp(backend, { AUTH_ANONYMOUS_SIGNIN: 'true' });
  });
  afterAll(async () => t?.close());

  it('logs the second factor step and anonymous sign-ins with their method', async () => {
    const email = `mfa-log-${Date.now()}@example.com`;
    const up = await call(t, 'POST', '/api/auth/signup', { body: { email, password: 'correct-horse-9' } });
    const bearer = { authorization: `Bearer ${up.body.accessToken}` };
    const factor = (await call(t, 'POST', '/api/auth/mfa/factors', { headers: bearer, body: {} })).body;
    expect(
      (
        await call(t, 'POST', `/api/auth/mfa/factors/${factor.id}/verify`, {
          headers: bearer,
          body: { code: generateSync({ secret: factor.secret }) },
        })
      ).status,
    ).toBe(200);
    const challenge = async () =>
      (await call(t, 'POST', '/api/auth/signin', { body: { email, password: 'correct-horse-9' } })).body.challenge
        .token;
    expect(
      (
        await call(t, 'POST', '/api/auth/mfa/challenge', {
          body: { token: await challenge(), factorId: factor.id, code: '000000' },
        })
      ).status,
    ).toBe(400);
    const later = generateSync({ secret: factor.secret, epoch: Math.floor(Date.now() / 1000) + 30 }); // the next step: unused yet
    expect(
      (
        await call(t, 'POST', '/api/auth/mfa/challenge', {
          body: { token: await challenge(), factorId: factor.id, code: later },
        })
      ).status,
    ).toBe(200);
    const anon = await call(t, 'POST', '/api/auth/signin/anonymous');
    expect(anon.status).toBe(200);

    const page = await call(t, 'GET', '/api/logs/auth?limit=100', { headers: { 'x-api-key': t.adminKey } });
    const lines = page.body.logs.map((l: any) => [l.eventMessage, l.body.method, l.body.userId ?? null]).reverse();
    const userId = up.body.user.id;
    expect(lines).toEqual(
      expect.arrayContaining([
        ['sign-in: second factor required', 'password', null],
        ['sign-in failed', 'mfa', null],
        ['sign-in', 'mfa', userId],
        ['sign-in', 'anonymous', anon.body.user.id],
      ]),
    );
    expect(JSON.stringify(page.body)).not.toContain(factor.secret);
  });
});
