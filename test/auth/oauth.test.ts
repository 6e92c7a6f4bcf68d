import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { expectError, uniqueEmail } from './util.js';
import { OidcServer, type OidcAccount } from './oidc-server.js';
import { GitHubServer, type GitHubAccount } from './github-server.js';
import { Browser } from './browser.js';
import { randomToken, s256 } from '../../src/auth/oauth/flow.js';

const APP = 'http://app.test/auth/callback';
const KC_SECRET = 'kc-client-secret-0123456789';
let subjects = 0;
const newSub = () => `sub-${Date.now().toString(36)}-${subjects++}`;

describe.each(backends())('OAuth / OpenID Connect sign-in (%s)', (backend) => {
  let t: TestApp;
  const oidc = new OidcServer();
  const gh = new GitHubServer();

  beforeAll(async () => {
    await Promise.all([oidc.listen(), gh.listen()]);
    t = await startApp(backend, {
      OAUTH_PROVIDERS: 'kc,github,down',
      // Nothing listens on port 1: discovery fails.
      OAUTH_DOWN_ISSUER: 'http://127.0.0.1:1',
      OAUTH_DOWN_CLIENT_ID: 'down',
      OAUTH_DOWN_CLIENT_SECRET: 'down-secret',
      OAUTH_KC_ISSUER: oidc.issuer,
      OAUTH_KC_CLIENT_ID: 'plinth-web',
      OAUTH_KC_CLIENT_SECRET: KC_SECRET,
      OAUTH_KC_ID_TOKEN_AUDIENCES: 'plinth-mobile',
      OAUTH_GITHUB_CLIENT_ID: gh.clientId,
      OAUTH_GITHUB_CLIENT_SECRET: gh.clientSecret,
      OAUTH_GITHUB_AUTH_URL: `${gh.url}/login/oauth`,
      OAUTH_GITHUB_API_URL: `${gh.url}/api`,
      AUTH_REDIRECT_URLS: `${APP},http://app.test/native/*`,
    });
    await oidc.configure({ clientId: 'plinth-web', clientSecret: KC_SECRET, redirectUris: [`${t.url}/api/auth/oauth/kc/callback`] });
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([oidc.close(), gh.close()]);
  });

  /** Starts a sign-in in a fresh browser; answers the browser, the app's verifier and the start answer. */
  async function start(provider: string, opts: { redirect?: string; browser?: Browser } = {}) {
    const browser = opts.browser ?? new Browser();
    const verifier = randomToken();
    const q = new URLSearchParams({ redirect_uri: opts.redirect ?? APP, code_challenge: s256(verifier) });
    const res = await browser.get(`${t.url}/api/auth/oauth/${provider}?${q}`);
    const body = await res.json();
    return { browser, verifier, res, body };
  }

  /** Runs the browser part through the provider and back to the app; answers the app URL. */
  async function toApp(provider: 'kc' | 'github', login: OidcAccount | GitHubAccount | null) {
    if (provider === 'kc') oidc.nextLogin = login as OidcAccount | null;
    else gh.nextLogin = login as GitHubAccount | null;
    const s = await start(provider);
    expect(s.res.status, JSON.stringify(s.body)).toBe(200);
    const { location } = await s.browser.follow(s.body.authUrl, 'http://app.test/');
    expect(location).not.toBeNull();
    return { ...s, back: new URL(location!) };
  }

  /** The whole flow, ending with the app's POST /api/auth/oauth/exchange. */
  async function signIn(provider: 'kc' | 'github', login: OidcAccount | GitHubAccount) {
    const f = await toApp(provider, login);
    const code = f.back.searchParams.get('insforge_code');
    expect(code, f.back.toString()).toBeTruthy();
    return call(t, 'POST', '/api/auth/oauth/exchange?client_type=mobile', { body: { code, code_verifier: f.verifier } });
  }

  const kcAccount = (over: Partial<OidcAccount> = {}): OidcAccount => ({
    sub: newSub(),
    email: uniqueEmail('kc'),
    email_verified: true,
    name: 'Kay Cee',
    picture: 'https://img.example.com/kc.png',
    ...over,
  });

  const ghAccount = (over: Partial<GitHubAccount> = {}): GitHubAccount => ({
    id: 1000 + subjects++,
    login: 'octo',
    name: 'Octo Cat',
    avatar_url: 'https://avatars.example.com/u/1',
    emails: [
      { email: uniqueEmail('gh-secondary'), primary: false, verified: true },
      { email: uniqueEmail('gh'), primary: true, verified: true },
    ],
    ...over,
  });

  it('lists the providers that are on to admins, without secrets', async () => {
    const a = await call(t, 'GET', '/api/auth/oauth/providers', { headers: { 'x-api-key': t.adminKey } });
    expect(a.status).toBe(200);
    expect(a.body.providers).toEqual([
      { name: 'kc', type: 'oidc', issuer: oidc.issuer, clientId: 'plinth-web', scopes: ['openid', 'email', 'profile'] },
      { name: 'github', type: 'github', issuer: null, clientId: gh.clientId, scopes: ['read:user', 'user:email'] },
      { name: 'down', type: 'oidc', issuer: 'http://127.0.0.1:1', clientId: 'down', scopes: ['openid', 'email', 'profile'] },
    ]);
    expect(a.text).not.toContain(KC_SECRET);
    expect(a.text).not.toContain(gh.clientSecret);
    expectError(await call(t, 'GET', '/api/auth/oauth/providers', { headers: { apikey: t.anonKey } }), 403, 'FORBIDDEN');
    expect(t.deps.oauth.publicConfig()).toEqual({ oAuthProviders: ['github'], customOAuthProviders: ['kc', 'down'] });
  });

  it('starts with {authUrl}: PKCE S256, state and nonce to the provider, an HttpOnly SameSite=Lax cookie, only hashes stored', async () => {
    const s = await start('kc');
    expect(s.res.status).toBe(200);
    const auth = new URL(s.body.authUrl);
    expect(auth.origin).toBe(oidc.issuer);
    const q = auth.searchParams;
    expect(q.get('client_id')).toBe('plinth-web');
    expect(q.get('redirect_uri')).toBe(`${t.url}/api/auth/oauth/kc/callback`);
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(q.get('code_challenge')).not.toBe(s256(s.verifier));
    expect(q.get('state')).toMatch(/^[\w-]{43}$/);
    expect(q.get('nonce')).toMatch(/^[\w-]{43}$/);
    const cookie = s.res.headers.getSetCookie()[0]!;
    expect(cookie).toMatch(/^plinth_oauth=[\w-]{43}; Path=\/api\/auth\/oauth; Max-Age=600; HttpOnly; SameSite=Lax$/);
    const { rows } = await t.deps.db.query<{ n: number }>('select count(*)::int as n from auth.oauth_flows where state_hash = $1', [q.get('state')]);
    expect(rows[0]!.n).toBe(0);
    // A browser opening the URL itself is redirected at once.
    // (fetch cannot send Sec-Fetch-Mode, so this one goes through inject)
    const nav = await t.app.inject({
      method: 'GET',
      url: `/api/auth/oauth/kc?redirect_uri=${encodeURIComponent(APP)}&code_challenge=${s256(randomToken())}`,
      headers: { 'sec-fetch-mode': 'navigate' },
    });
    expect(nav.statusCode).toBe(302);
    expect(nav.headers.location).toMatch(new RegExp(`^${oidc.issuer}/`));
    expect(String(nav.headers['set-cookie'])).toMatch(/^plinth_oauth=/);
    // The SDK's path for providers it does not know by name.
    expect((await start('custom/kc')).res.status).toBe(200);
  });

  it('first OIDC sign-in creates the user with name, avatar and providers; the next one finds it', async () => {
    const acct = kcAccount();
    const a = await signIn('kc', acct);
    expect(a.status, a.text).toBe(200);
    expect(a.body.user).toMatchObject({ email: acct.email, emailVerified: true, providers: ['kc'], profile: { name: 'Kay Cee', avatar_url: acct.picture } });
    expect(a.body.refreshToken).toMatch(/^rt_/);
    const me = await call(t, 'GET', '/api/auth/user', { token: a.body.accessToken });
    expect(me.status).toBe(200);
    expect(me.body.user.id).toBe(a.body.user.id);
    const refreshed = await call(t, 'POST', '/api/auth/refresh', { body: { refreshToken: a.body.refreshToken } });
    expect(refreshed.status).toBe(200);
    // The account has no password: password sign-in cannot reach it.
    expectError(await call(t, 'POST', '/api/auth/signin', { body: { email: acct.email, password: '!none' } }), 401, 'INVALID_CREDENTIALS');
    const again = await signIn('kc', { ...acct, name: 'Renamed' });
    expect(again.status).toBe(200);
    expect(again.body.user.id).toBe(a.body.user.id);
    const ids = await call(t, 'GET', '/api/auth/identities', { token: again.body.accessToken });
    expect(ids.status).toBe(200);
    expect(ids.body.identities).toEqual([
      { id: expect.any(String), provider: 'kc', email: acct.email, emailVerified: true, createdAt: expect.any(String), lastSignInAt: expect.any(String) },
    ]);
  });

  it('GitHub: the verified primary email, /user profile, and identities by GitHub id', async () => {
    const acct = ghAccount();
    const a = await signIn('github', acct);
    expect(a.status, a.text).toBe(200);
    expect(a.body.user).toMatchObject({ email: acct.emails[1]!.email, emailVerified: true, providers: ['github'], profile: { name: 'Octo Cat', avatar_url: acct.avatar_url } });
    const { rows } = await t.deps.db.query<{ subject: string }>('select subject from auth.identities where user_id = $1', [a.body.user.id]);
    expect(rows).toEqual([{ subject: String(acct.id) }]);
  });

  it('a provider-verified email links to the existing account, which keeps its password', async () => {
    const email = uniqueEmail('link');
    const up = await call(t, 'POST', '/api/auth/signup', { body: { email, password: 'password-123' } });
    await t.deps.db.query('update auth.users set email_verified = true where id = $1', [up.body.user.id]);
    const a = await signIn('kc', kcAccount({ email: email.toUpperCase() }));
    expect(a.status, a.text).toBe(200);
    expect(a.body.user.id).toBe(up.body.user.id);
    expect(a.body.user.providers).toEqual(['email', 'kc']);
    expect((await call(t, 'POST', '/api/auth/signin', { body: { email, password: 'password-123' } })).status).toBe(200);
    const gh1 = await signIn('github', ghAccount({ emails: [{ email, primary: true, verified: true }] }));
    expect(gh1.body.user).toMatchObject({ id: up.body.user.id, providers: ['email', 'kc', 'github'] });
  });

  it('an UNVERIFIED provider email never links to an existing account (account takeover): 409, nothing changed', async () => {
    const victim = await createTestUser(t, uniqueEmail('victim'));
    const before = await t.deps.db.query<{ n: number }>('select count(*)::int as n from auth.sessions where user_id = $1', [victim.userId]);
    const a = await signIn('kc', kcAccount({ email: victim.email, email_verified: false }));
    expectError(a, 409, 'OAUTH_EMAIL_NOT_VERIFIED');
    expect(a.body.accessToken).toBeUndefined();
    const gha = await signIn('github', ghAccount({ emails: [{ email: victim.email, primary: true, verified: false }] }));
    expectError(gha, 409, 'OAUTH_EMAIL_NOT_VERIFIED');
    // A verified secondary address is not the primary one: it does not link either.
    const ghb = await signIn('github', ghAccount({ emails: [{ email: victim.email, primary: false, verified: true }, { email: uniqueEmail('other'), primary: true, verified: false }] }));
    expect(ghb.status).toBe(200);
    expect(ghb.body.user.id).not.toBe(victim.userId);
    const ids = await t.deps.db.query('select 1 from auth.identities where user_id = $1', [victim.userId]);
    expect(ids.rows).toHaveLength(0);
    const after = await t.deps.db.query<{ n: number }>('select count(*)::int as n from auth.sessions where user_id = $1', [victim.userId]);
    expect(after.rows[0]!.n).toBe(before.rows[0]!.n);
  });

  it('an unverified email with no account makes a new, unverified account', async () => {
    const acct = kcAccount({ email_verified: false });
    const a = await signIn('kc', acct);
    expect(a.status).toBe(200);
    expect(a.body.user).toMatchObject({ email: acct.email, emailVerified: false, providers: ['kc'] });
    // Once the provider verifies it, so is the account's email.
    const b = await signIn('kc', { ...acct, email_verified: true });
    expect(b.body.user).toMatchObject({ id: a.body.user.id, emailVerified: true });
  });

  it('a verified provider email takes over an account whose own email was never verified: its password and sessions end', async () => {
    const email = uniqueEmail('squat');
    const squatter = await call(t, 'POST', '/api/auth/signup', { body: { email, password: 'attacker-pw' } });
    expect(squatter.body.user.emailVerified).toBe(false);
    const a = await signIn('kc', kcAccount({ email }));
    expect(a.status).toBe(200);
    expect(a.body.user).toMatchObject({ id: squatter.body.user.id, emailVerified: true, providers: ['kc'] });
    expectError(await call(t, 'POST', '/api/auth/signin', { body: { email, password: 'attacker-pw' } }), 401, 'INVALID_CREDENTIALS');
    expectError(await call(t, 'POST', '/api/auth/refresh', { body: { refreshToken: squatter.body.refreshToken } }), 401, 'INVALID_REFRESH_TOKEN');
    expectError(await call(t, 'GET', '/api/auth/user', { token: squatter.body.accessToken }), 401);
  });

  it('a provider that shares no email is a 400', async () => {
    expectError(await signIn('kc', { sub: newSub() }), 400, 'OAUTH_EMAIL_MISSING');
    expectError(await signIn('github', ghAccount({ emails: [] })), 400, 'OAUTH_EMAIL_MISSING');
  });

  it('refuses a redirect URL not in AUTH_REDIRECT_URLS; a trailing * allows a path prefix only', async () => {
    for (const bad of [
      'http://evil.test/auth/callback',
      'https://app.test/auth/callback',
      'http://app.test:8080/auth/callback',
      'http://app.test/auth/callback/more',
      'http://app.test/auth/callback#x',
      'http://app.test.evil.test/native/x',
      'http://user@app.test/auth/callback',
      'javascript:alert(1)',
      'not a url',
    ]) {
      const s = await start('kc', { redirect: bad });
      expectError({ status: s.res.status, body: s.body, text: '', headers: s.res.headers }, 400, 'REDIRECT_NOT_ALLOWED');
      expect(s.res.headers.getSetCookie()).toEqual([]);
    }
    for (const good of ['http://app.test/native/', 'http://app.test/native/deep/path?x=1', `${APP}?next=%2Fhome`]) {
      expect((await start('kc', { redirect: good })).res.status, good).toBe(200);
    }
  });

  it('refuses an unknown provider (404), a bad code_challenge (400)', async () => {
    const s = await start('nope');
    expect(s.res.status).toBe(404);
    expect(s.body.error).toBe('OAUTH_PROVIDER_NOT_FOUND');
    const bad = await call(t, 'GET', `/api/auth/oauth/kc?redirect_uri=${encodeURIComponent(APP)}&code_challenge=short`);
    expectError(bad, 400, 'INVALID_INPUT');
    expectError(await call(t, 'GET', '/api/auth/oauth/kc?code_challenge=x'), 400, 'INVALID_INPUT');
  });

  it('the callback refuses a bad state, a missing cookie, a replay, and burns the state', async () => {
    oidc.nextLogin = kcAccount();
    const s = await start('kc');
    const { location: callback } = await s.browser.follow(s.body.authUrl, `${t.url}/api/auth/oauth/kc/callback`);
    expect(callback).toContain('state=');
    // Another browser (no cookie) opens the callback: refused, and the state is spent.
    const stranger = await new Browser().get(callback!);
    expect(stranger.status).toBe(400);
    expect((await stranger.json()).error).toBe('INVALID_OAUTH_STATE');
    const owner = await s.browser.get(callback!);
    expect(owner.status).toBe(400);
    // A forged state, no state, a wrong cookie.
    const u = new URL(callback!);
    u.searchParams.set('state', randomToken());
    expectError(await call(t, 'GET', u.pathname + u.search), 400, 'INVALID_OAUTH_STATE');
    expectError(await call(t, 'GET', '/api/auth/oauth/kc/callback?code=abc'), 400, 'INVALID_OAUTH_STATE');
    const s2 = await start('kc');
    const { location: cb2 } = await s2.browser.follow(s2.body.authUrl, `${t.url}/api/auth/oauth/kc/callback`);
    s2.browser.cookies(t.url).set('plinth_oauth', randomToken());
    expect((await s2.browser.get(cb2!)).status).toBe(400);
    // The state of one provider does not work at another's callback.
    const s3 = await start('kc');
    const { location: cb3 } = await s3.browser.follow(s3.body.authUrl, `${t.url}/api/auth/oauth/kc/callback`);
    expect((await s3.browser.get(cb3!.replace('/kc/callback', '/github/callback'))).status).toBe(400);
    // The same callback twice from the right browser: the second is a replay.
    const s4 = await start('kc');
    const { location: cb4 } = await s4.browser.follow(s4.body.authUrl, `${t.url}/api/auth/oauth/kc/callback`);
    const cookie = s4.browser.cookies(t.url).get('plinth_oauth')!;
    expect((await s4.browser.get(cb4!)).status).toBe(302);
    s4.browser.cookies(t.url).set('plinth_oauth', cookie);
    expect((await s4.browser.get(cb4!)).status).toBe(400);
  });

  it('a refusal at the provider comes back to the app as ?error=', async () => {
    const f = await toApp('kc', null);
    expect(f.back.origin + f.back.pathname).toBe(APP);
    expect(f.back.searchParams.get('error')).toBe('access_denied');
    expect(f.back.searchParams.get('insforge_code')).toBeNull();
  });

  it('the code works once, only with the right verifier, and is burnt by a wrong one', async () => {
    const f = await toApp('kc', kcAccount());
    const code = f.back.searchParams.get('insforge_code')!;
    expect([...f.back.searchParams.keys()]).toEqual(['insforge_code']);
    const wrong = await call(t, 'POST', '/api/auth/oauth/exchange', { body: { code, code_verifier: randomToken() } });
    expectError(wrong, 400, 'INVALID_OAUTH_CODE');
    expectError(await call(t, 'POST', '/api/auth/oauth/exchange', { body: { code, code_verifier: f.verifier } }), 400, 'INVALID_OAUTH_CODE');
    const g = await toApp('github', ghAccount());
    const gcode = g.back.searchParams.get('insforge_code')!;
    expect((await call(t, 'POST', '/api/auth/oauth/exchange', { body: { code: gcode, code_verifier: g.verifier } })).status).toBe(200);
    expectError(await call(t, 'POST', '/api/auth/oauth/exchange', { body: { code: gcode, code_verifier: g.verifier } }), 400, 'INVALID_OAUTH_CODE');
    expectError(await call(t, 'POST', '/api/auth/oauth/exchange', { body: { code: 'x', code_verifier: g.verifier } }), 400, 'INVALID_OAUTH_CODE');
    expectError(await call(t, 'POST', '/api/auth/oauth/exchange', { body: { code: gcode } }), 400, 'INVALID_INPUT');
  });

  it('a code the provider refuses is a 400, an unreachable provider a 502', async () => {
    const f = await toApp('github', ghAccount());
    await t.deps.db.query(`update auth.oauth_flows set provider_code = 'forged' where code_expires_at is not null and exchanged_at is null`);
    const a = await call(t, 'POST', '/api/auth/oauth/exchange', { body: { code: f.back.searchParams.get('insforge_code'), code_verifier: f.verifier } });
    expectError(a, 400, 'OAUTH_PROVIDER_REJECTED');
    expect(a.body.message).toContain('bad_verification_code');
    const k = await toApp('kc', kcAccount());
    await t.deps.db.query(`update auth.oauth_flows set provider_code = 'forged' where code_expires_at is not null and exchanged_at is null`);
    const b = await call(t, 'POST', '/api/auth/oauth/exchange', { body: { code: k.back.searchParams.get('insforge_code'), code_verifier: k.verifier } });
    expectError(b, 400, 'OAUTH_PROVIDER_REJECTED');
    expect(b.body.message).toContain('invalid_grant');
    const down = await start('down');
    expect(down.res.status).toBe(502);
    expect(down.body.error).toBe('OAUTH_PROVIDER_UNAVAILABLE');
    expect(down.res.headers.getSetCookie()).toEqual([]);
  });

  it('two first sign-ins of one subject at once make one user', async () => {
    const claims = { sub: newSub(), email: uniqueEmail('twin'), email_verified: true };
    const tokens = await Promise.all([0, 1, 2].map(() => oidc.mintIdToken(claims, { audience: 'plinth-web' })));
    const answers = await Promise.all(tokens.map((token) => call(t, 'POST', '/api/auth/id-token', { body: { provider: 'kc', token } })));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(new Set(answers.map((a) => a.body.user.id)).size).toBe(1);
    const { rows } = await t.deps.db.query<{ n: number }>('select count(*)::int as n from auth.identities where subject = $1', [claims.sub]);
    expect(rows[0]!.n).toBe(1);
  });

  it('an expired code is refused', async () => {
    const f = await toApp('kc', kcAccount());
    await t.deps.db.query(`update auth.oauth_flows set code_expires_at = now() - interval '1 second' where code_expires_at is not null and exchanged_at is null`);
    expectError(await call(t, 'POST', '/api/auth/oauth/exchange', { body: { code: f.back.searchParams.get('insforge_code'), code_verifier: f.verifier } }), 400, 'INVALID_OAUTH_CODE');
  });

  it('an ID token whose nonce is not the one of this sign-in is refused (401), and nobody is signed in', async () => {
    const acct = kcAccount();
    const f = await toApp('kc', acct);
    await t.deps.db.query(`update auth.oauth_flows set nonce = 'another-nonce' where code_expires_at is not null and exchanged_at is null`);
    const a = await call(t, 'POST', '/api/auth/oauth/exchange', { body: { code: f.back.searchParams.get('insforge_code'), code_verifier: f.verifier } });
    expectError(a, 401, 'INVALID_ID_TOKEN');
    expect(a.body.message).toMatch(/nonce/);
    const { rows } = await t.deps.db.query('select 1 from auth.users where email = $1', [acct.email]);
    expect(rows).toHaveLength(0);
  });

  describe('POST /api/auth/id-token', () => {
    const idToken = (claims: Record<string, unknown>, opts: { audience?: string; expiresIn?: number; issuer?: string } = {}) =>
      oidc.mintIdToken({ sub: newSub(), email: uniqueEmail('native'), email_verified: true, name: 'Native', ...claims }, { audience: 'plinth-mobile', ...opts });
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

    it('checks the nonce: the same nonce or its SHA-256 passes, another or none fails', async () => {
      const nonce = randomToken();
      const { createHash } = await import('node:crypto');
      expect((await post({ provider: 'kc', token: await idToken({ nonce }), nonce })).status).toBe(200);
      const hashed = createHash('sha256').update(nonce).digest('hex');
      expect((await post({ provider: 'kc', token: await idToken({ nonce: hashed }), nonce })).status).toBe(200);
      expectError(await post({ provider: 'kc', token: await idToken({ nonce }), nonce: 'other' }), 401, 'INVALID_ID_TOKEN');
      expectError(await post({ provider: 'kc', token: await idToken({ nonce }) }), 401, 'INVALID_ID_TOKEN');
      expectError(await post({ provider: 'kc', token: await idToken({}), nonce }), 401, 'INVALID_ID_TOKEN');
    });

    it('refuses a forged signature, a tampered payload, alg none, garbage; GitHub and unknown providers', async () => {
      const { SignJWT, generateKeyPair } = await import('jose');
      const { privateKey } = await generateKeyPair('RS256');
      const now = Math.floor(Date.now() / 1000);
      const forged = await new SignJWT({ sub: 'x', email: 'x@example.com', email_verified: true, iat: now, exp: now + 60 })
        .setProtectedHeader({ alg: 'RS256', kid: oidc.kid })
        .setIssuer(oidc.issuer)
        .setAudience('plinth-mobile')
        .sign(privateKey);
      expectError(await post({ provider: 'kc', token: forged }), 401, 'INVALID_ID_TOKEN');
      const [h, , sig] = (await idToken({})).split('.');
      const payload = Buffer.from(JSON.stringify({ sub: 'admin', iss: oidc.issuer, aud: 'plinth-mobile', iat: now, exp: now + 60 })).toString('base64url');
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
      expectError(await post({ provider: 'kc', token: await idToken({ email: victim.email, email_verified: false }) }), 409, 'OAUTH_EMAIL_NOT_VERIFIED');
      expectError(await post({ provider: 'kc', token: await idToken({ email: victim.email, email_verified: 'false' }) }), 409, 'OAUTH_EMAIL_NOT_VERIFIED');
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
      expect((await call(t, 'DELETE', `/api/auth/identities/${mine[0].id}`, { token: up.body.accessToken })).status).toBe(200);
    });

    it("cannot see or unlink another user's identity; needs a user token", async () => {
      const a = await signIn('kc', kcAccount());
      const b = await signIn('github', ghAccount());
      const [ida] = (await call(t, 'GET', '/api/auth/identities', { token: a.body.accessToken })).body.identities;
      expectError(await call(t, 'DELETE', `/api/auth/identities/${ida.id}`, { token: b.body.accessToken }), 404, 'IDENTITY_NOT_FOUND');
      expectError(await call(t, 'DELETE', '/api/auth/identities/not-a-uuid', { token: b.body.accessToken }), 400, 'INVALID_INPUT');
      expectError(await call(t, 'GET', '/api/auth/identities'), 401, 'UNAUTHORIZED');
      expectError(await call(t, 'GET', '/api/auth/identities', { headers: { 'x-api-key': t.adminKey } }), 403, 'FORBIDDEN');
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
    await oidc.configure({ clientId: 'plinth-web', clientSecret: KC_SECRET, redirectUris: [`${t.url}/api/auth/oauth/kc/callback`] });
  });
  afterAll(async () => {
    await t?.close();
    await oidc.close();
  });
  const post = async (claims: Record<string, unknown>) =>
    call(t, 'POST', '/api/auth/id-token', { body: { provider: 'kc', token: await oidc.mintIdToken({ sub: newSub(), email: uniqueEmail('rev'), ...claims }, { audience: 'plinth-web' }) } });

  it('signs in a provider-verified email, refuses an unverified one with 403', async () => {
    expect((await post({ email_verified: true })).status).toBe(200);
    expectError(await post({ email_verified: false }), 403, 'EMAIL_NOT_VERIFIED');
  });

  it('with AUTH_REDIRECT_URLS unset, no redirect sign-in can start', async () => {
    const a = await call(t, 'GET', `/api/auth/oauth/kc?redirect_uri=${encodeURIComponent(APP)}&code_challenge=${s256(randomToken())}`);
    expectError(a, 400, 'REDIRECT_NOT_ALLOWED');
    expect(a.body.message).toMatch(/AUTH_REDIRECT_URLS is not set/);
  });
});
