import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { expectError, uniqueEmail } from './util.js';
import { OidcServer } from './oidc-server.js';
import { APP, KC_SECRET, OAuthFixture, ghAccount, kcAccount, newSub } from './oauth-fixture.js';
import { randomToken, s256 } from '../../src/auth/oauth/flow.js';

// Native ID-token sign-in, identities, and REQUIRE_EMAIL_VERIFICATION with providers.
describe.each(backends())('OAuth ID tokens and identities (%s)', (backend) => {
  const f = new OAuthFixture();
  const { oidc } = f;
  let t: TestApp;
  beforeAll(async () => {
    await f.start(backend);
    t = f.t;
  });
  afterAll(() => f.close());
  const signIn = f.signIn.bind(f);

  describe('POST /api/auth/id-token', () => {
    const idToken = (
      claims: Record<string, unknown>,
      opts: { audience?: string; expiresIn?: number; issuer?: string } = {},
    ) =>
      oidc.mintIdToken(
        { sub: newSub(), email: uniqueEmail('native'), email_verified: true, name: 'Native', ...claims },
        { audience: 'plinth-mobile', ...opts },
      );
    const post = (body: unknown) => call(t, 'POST', '/api/auth/id-token?client_type=mobile', { body });

    it('signs in with a token from the provider (a native client id), verified by its JWKS', async () => {
      const token = await idToken({});
      const a = await post({ provider: 'kc', token });
      expect(a.status, a.text).toBe(200);
      expect(a.body.user).toMatchObject({ emailVerified: true, providers: ['kc'], profile: { name: 'Native' } });
      expect(a.body.refreshToken).toMatch(/^rt_/);
      expect((await post({ provider: 'kc', token: await idToken({}, { audience: 'plinth-web' }) })).status).toBe(200);
    });

    it.each([
      ['another audience', {}, { audience: 'someone-else' }, /audience/],
      ['an expired token', {}, { expiresIn: -120 }, /expired/],
      ['another issuer', {}, { issuer: 'https://evil.example.com' }, /issuer/],
    ])('refuses %s (401 INVALID_ID_TOKEN)', async (_n, claims, opts, message) => {
      const a = await post({ provider: 'kc', token: await idToken(claims, opts) });
      expectError(a, 401, 'INVALID_ID_TOKEN');
      expect(a.body.message).toMatch(message);
    });

    it('refuses an ID token issued more than 60 s in the future; 30 s of skew passes', async () => {
      const now = Math.floor(Date.now() / 1000);
      const ahead = await post({ provider: 'kc', token: await idToken({ iat: now + 180, exp: now + 900 }) });
      expectError(ahead, 401, 'INVALID_ID_TOKEN');
      expect(ahead.body.message).toMatch(/future/);
      expect((await post({ provider: 'kc', token: await idToken({ iat: now + 30 }) })).status).toBe(200);
    });

    it('each ID token signs in once, with or without a nonce; the spent token is stored in the database', async () => {
      const token = await idToken({ jti: undefined });
      expect((await post({ provider: 'kc', token })).status).toBe(200);
      const again = await post({ provider: 'kc', token });
      expectError(again, 401, 'INVALID_ID_TOKEN');
      expect(again.body.message).toMatch(/already been used/);
      expect(again.body.accessToken).toBeUndefined();
      // The same signature re-encoded (the unused low bits of its last base64url character set)
      // still verifies, and is still the same token.
      const last = token.at(-1)!;
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      const twin = token.slice(0, -1) + alphabet[(alphabet.indexOf(last) & ~15) | (~alphabet.indexOf(last) & 15)];
      const replayed = await post({ provider: 'kc', token: twin });
      expectError(replayed, 401, 'INVALID_ID_TOKEN');
      expect(replayed.body.message).toMatch(/already been used/);
      const nonce = randomToken();
      const withNonce = await idToken({ nonce });
      expect((await post({ provider: 'kc', token: withNonce, nonce })).status).toBe(200);
      expectError(await post({ provider: 'kc', token: withNonce, nonce }), 401, 'INVALID_ID_TOKEN');
      const { rows } = await t.deps.db.query<{ n: number }>(
        "select count(*)::int as n from auth.oauth_spent_id_tokens where expires_at > now() + interval '9 minutes'",
      );
      expect(rows[0]!.n).toBeGreaterThanOrEqual(2);
    });

    it('spent ID tokens are kept until they expire, then pruned', async () => {
      const { pruneSpentIdTokens } = await import('../../src/auth/oauth/verify.js');
      const old = `test-expired-${newSub()}`;
      const fresh = `test-fresh-${newSub()}`;
      await t.deps.db.query(
        "insert into auth.oauth_spent_id_tokens (token_hash, expires_at) values ($1, now() - interval '1 second'), ($2, now() + interval '1 hour')",
        [old, fresh],
      );
      await pruneSpentIdTokens(t.deps.db);
      const { rows } = await t.deps.db.query<{ token_hash: string }>(
        'select token_hash from auth.oauth_spent_id_tokens where token_hash = any($1)',
        [[old, fresh]],
      );
      expect(rows.map((r) => r.token_hash)).toEqual([fresh]);
    });

    it('checks the nonce: the same nonce or its SHA-256 passes, another or none fails', async () => {
      const nonce = randomToken();
      const { createHash } = await import('node:crypto');
      expect((await post({ provider: 'kc', token: await idToken({ nonce }), nonce })).status).toBe(200);
      const hashed = createHash('sha256').update(nonce).digest('hex');
      expect((await post({ provider: 'kc', token: await idToken({ nonce: hashed }), nonce })).status).toBe(200);
      expectError(
        await post({ provider: 'kc', token: await idToken({ nonce }), nonce: 'other' }),
        401,
        'INVALID_ID_TOKEN',
      );
      expectError(await post({ provider: 'kc', token: await idToken({ nonce }) }), 401, 'INVALID_ID_TOKEN');
      expectError(await post({ provider: 'kc', token: await idToken({}), nonce }), 401, 'INVALID_ID_TOKEN');
    });

    it('refuses a forged signature, a tampered payload, alg none, garbage; GitHub and unknown providers', async () => {
      const { SignJWT, generateKeyPair } = await import('jose');
      const { privateKey } = await generateKeyPair('RS256');
      const now = Math.floor(Date.now() / 1000);
      const forged = await new SignJWT({
        sub: 'x',
        email: 'x@example.com',
        email_verified: true,
        iat: now,
        exp: now + 60,
      })
        .setProtectedHeader({ alg: 'RS256', kid: oidc.kid })
        .setIssuer(oidc.issuer)
        .setAudience('plinth-mobile')
        .sign(privateKey);
      expectError(await post({ provider: 'kc', token: forged }), 401, 'INVALID_ID_TOKEN');
      const [h, , sig] = (await idToken({})).split('.');
      const payload = Buffer.from(
        JSON.stringify({ sub: 'admin', iss: oidc.issuer, aud: 'plinth-mobile', iat: now, exp: now + 60 }),
      ).toString('base64url');
      expectError(await post({ provider: 'kc', token: `${h}.${payload}.${sig}` }), 401, 'INVALID_ID_TOKEN');
      const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${payload}.`;
      expectError(await post({ provider: 'kc', token: none }), 401, 'INVALID_ID_TOKEN');
      expectError(await post({ provider: 'kc', token: 'garbage' }), 401, 'INVALID_ID_TOKEN');
      expectError(await post({ provider: 'github', token: await idToken({}) }), 400, 'INVALID_INPUT');
      expectError(await post({ provider: 'nope', token: await idToken({}) }), 404, 'OAUTH_PROVIDER_NOT_FOUND');
      expectError(await post({ provider: 'kc' }), 400, 'INVALID_INPUT');
    });

    it('an unverified token email never links to an existing account', async () => {
      const victim = await createTestUser(t, uniqueEmail('victim-native'));
      expectError(
        await post({ provider: 'kc', token: await idToken({ email: victim.email, email_verified: false }) }),
        409,
        'OAUTH_EMAIL_NOT_VERIFIED',
      );
      expectError(
        await post({ provider: 'kc', token: await idToken({ email: victim.email, email_verified: 'false' }) }),
        409,
        'OAUTH_EMAIL_NOT_VERIFIED',
      );
    });
  });

  describe('identities', () => {
    it('never unlinks the last way to sign in; a password counts as one', async () => {
      const a = await signIn('kc', kcAccount());
      const token = a.body.accessToken;
      const [kc] = (await call(t, 'GET', '/api/auth/identities', { token })).body.identities;
      expectError(await call(t, 'DELETE', `/api/auth/identities/${kc.id}`, { token }), 409, 'LAST_SIGN_IN_METHOD');
      // Link GitHub by its verified email, then kc can go.
      await signIn('github', ghAccount({ emails: [{ email: a.body.user.email, primary: true, verified: true }] }));
      const del = await call(t, 'DELETE', `/api/auth/identities/${kc.id}`, { token });
      expect(del.status).toBe(200);
      expect(del.body.success).toBe(true);
      const left = (await call(t, 'GET', '/api/auth/identities', { token })).body.identities;
      expect(left.map((i: { provider: string }) => i.provider)).toEqual(['github']);
      expectError(await call(t, 'DELETE', `/api/auth/identities/${left[0].id}`, { token }), 409, 'LAST_SIGN_IN_METHOD');
      // With a password, the last identity can go.
      const email = uniqueEmail('pw');
      const up = await call(t, 'POST', '/api/auth/signup', { body: { email, password: 'password-123' } });
      await t.deps.db.query('update auth.users set email_verified = true where id = $1', [up.body.user.id]);
      await signIn('kc', kcAccount({ email }));
      const mine = (await call(t, 'GET', '/api/auth/identities', { token: up.body.accessToken })).body.identities;
      expect(mine).toHaveLength(1);
      expect(
        (await call(t, 'DELETE', `/api/auth/identities/${mine[0].id}`, { token: up.body.accessToken })).status,
      ).toBe(200);
    });

    it("cannot see or unlink another user's identity; needs a user token", async () => {
      const a = await signIn('kc', kcAccount());
      const b = await signIn('github', ghAccount());
      const [ida] = (await call(t, 'GET', '/api/auth/identities', { token: a.body.accessToken })).body.identities;
      expectError(
        await call(t, 'DELETE', `/api/auth/identities/${ida.id}`, { token: b.body.accessToken }),
        404,
        'IDENTITY_NOT_FOUND',
      );
      expectError(
        await call(t, 'DELETE', '/api/auth/identities/not-a-uuid', { token: b.body.accessToken }),
        400,
        'INVALID_INPUT',
      );
      expectError(await call(t, 'GET', '/api/auth/identities'), 401, 'UNAUTHORIZED');
      expectError(
        await call(t, 'GET', '/api/auth/identities', { headers: { 'x-api-key': t.adminKey } }),
        403,
        'FORBIDDEN',
      );
    });
  });
});

describe.each(backends())('OAuth sign-in with REQUIRE_EMAIL_VERIFICATION (%s)', (backend) => {
  let t: TestApp;
  const oidc = new OidcServer();
  beforeAll(async () => {
    await oidc.listen();
    t = await startApp(backend, {
      REQUIRE_EMAIL_VERIFICATION: 'true',
      OAUTH_PROVIDERS: 'kc',
      OAUTH_KC_ISSUER: oidc.issuer,
      OAUTH_KC_CLIENT_ID: 'plinth-web',
      OAUTH_KC_CLIENT_SECRET: KC_SECRET,
    });
    await oidc.configure({
      clientId: 'plinth-web',
      clientSecret: KC_SECRET,
      redirectUris: [`${t.url}/api/auth/oauth/kc/callback`],
    });
  });
  afterAll(async () => {
    await t?.close();
    await oidc.close();
  });
  const post = async (claims: Record<string, unknown>) =>
    call(t, 'POST', '/api/auth/id-token', {
      body: {
        provider: 'kc',
        token: await oidc.mintIdToken(
          { sub: newSub(), email: uniqueEmail('rev'), ...claims },
          { audience: 'plinth-web' },
        ),
      },
    });

  it('signs in a provider-verified email, refuses an unverified one with 403', async () => {
    expect((await post({ email_verified: true })).status).toBe(200);
    expectError(await post({ email_verified: false }), 403, 'EMAIL_NOT_VERIFIED');
  });

  it('with AUTH_REDIRECT_URLS unset, no redirect sign-in can start', async () => {
    const a = await call(
      t,
      'GET',
      `/api/auth/oauth/kc?redirect_uri=${encodeURIComponent(APP)}&code_challenge=${s256(randomToken())}`,
    );
    expectError(a, 400, 'REDIRECT_NOT_ALLOWED');
    expect(a.body.message).toMatch(/AUTH_REDIRECT_URLS is not set/);
  });
});
