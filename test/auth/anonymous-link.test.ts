import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { OidcServer } from './oidc-server.js';
import { claimsOf, expectError, uniqueEmail } from './util.js';

let subjects = 0;
const newSub = () => `anon-sub-${Date.now().toString(36)}-${subjects++}`;

// Converting an anonymous user by linking a provider (a real oidc-provider mints ID tokens).
describe.each(backends())('anonymous user converted by linking a provider (%s)', (backend) => {
  const oidc = new OidcServer();
  let t: TestApp;
  beforeAll(async () => {
    await oidc.listen();
    t = await startApp(backend, {
      AUTH_ANONYMOUS_SIGNIN: 'true',
      OAUTH_PROVIDERS: 'kc',
      OAUTH_KC_ISSUER: oidc.issuer,
      OAUTH_KC_CLIENT_ID: 'plinth-web',
      OAUTH_KC_CLIENT_SECRET: 'kc-client-secret-0123456789',
    });
    await oidc.configure({
      clientId: 'plinth-web',
      clientSecret: 'kc-client-secret-0123456789',
      redirectUris: [`${t.url}/api/auth/oauth/kc/callback`],
    });
  });
  afterAll(async () => {
    await t?.close();
    await oidc.close();
  });

  const idToken = (claims: Record<string, unknown>) =>
    oidc.mintIdToken(
      { sub: newSub(), email: uniqueEmail('link'), email_verified: true, name: 'Linked', ...claims },
      { audience: 'plinth-web' },
    );
  const link = (token: string, body: unknown) => call(t, 'POST', '/api/auth/anonymous/link', { token, body });

  it('keeps the id, takes the identity and the email; the anonymous session ends; the provider then signs in to it', async () => {
    const a = await call(t, 'POST', '/api/auth/signin/anonymous');
    const email = uniqueEmail('linked');
    const sub = newSub();
    const l = await link(a.body.accessToken, { provider: 'kc', token: await idToken({ sub, email }) });
    expect(l.status, l.text).toBe(200);
    expect(l.body.user).toMatchObject({
      id: a.body.user.id,
      email,
      emailVerified: true,
      isAnonymous: false,
      providers: ['kc'],
      profile: { name: 'Linked' },
    });
    expect(claimsOf(l.body.accessToken)).toMatchObject({
      sub: a.body.user.id,
      is_anonymous: false,
      amr: [{ method: 'oauth' }],
    });
    expectError(await call(t, 'GET', '/api/auth/user', { token: a.body.accessToken }), 401, 'AUTH_UNAUTHORIZED');
    const again = await call(t, 'POST', '/api/auth/id-token', {
      body: { provider: 'kc', token: await idToken({ sub, email }) },
    });
    expect(again.body.user.id).toBe(a.body.user.id);
  });

  it('refuses an identity linked elsewhere, a taken email, a permanent caller and half-sent bodies; the user stays anonymous', async () => {
    const owner = await call(t, 'POST', '/api/auth/signup', {
      body: { email: uniqueEmail('owner'), password: 'password-1' },
    });
    const a = await call(t, 'POST', '/api/auth/signin/anonymous');
    const token = a.body.accessToken;
    expectError(
      await link(token, { provider: 'kc', token: await idToken({ email: owner.body.user.email }) }),
      409,
      'ALREADY_EXISTS',
    );
    const sub = newSub();
    await call(t, 'POST', '/api/auth/id-token', { body: { provider: 'kc', token: await idToken({ sub }) } });
    expectError(await link(token, { provider: 'kc', token: await idToken({ sub }) }), 409, 'ALREADY_EXISTS');
    expectError(await link(token, { provider: 'kc', token: 'garbage' }), 401, 'INVALID_ID_TOKEN');
    expectError(await link(token, { provider: 'nope', token: await idToken({}) }), 404, 'OAUTH_PROVIDER_NOT_FOUND');
    expectError(await link(token, { provider: 'kc' }), 400, 'INVALID_INPUT');
    expectError(await link(token, { code: 'x'.repeat(20), code_verifier: 'v'.repeat(43) }), 400, 'INVALID_OAUTH_CODE');
    expectError(await link(owner.body.accessToken, { provider: 'kc', token: await idToken({}) }), 409, 'NOT_ANONYMOUS');
    expect((await call(t, 'GET', '/api/auth/user', { token })).body.user).toMatchObject({
      isAnonymous: true,
      email: '',
      providers: [],
    });
  });
});
