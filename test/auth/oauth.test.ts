import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { createTestUser, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { expectError, uniqueEmail } from './util.js';
import { Browser } from './browser.js';
import { APP, KC_SECRET, OAuthFixture, ghAccount, kcAccount, newSub } from './oauth-fixture.js';
import { randomToken, s256 } from '../../src/auth/oauth/flow.js';

// The redirect flow (authorization code with PKCE) against a real OpenID provider and a
// GitHub wire-format server; ID tokens and identities are in oauth-tokens.test.ts.
describe.each(backends())('OAuth / OpenID Connect sign-in (%s)', (backend) => {
  const f = new OAuthFixture();
  const { oidc, gh } = f;
  let t: TestApp;
  beforeAll(async () => {
    await f.start(backend);
    t = f.t;
  });
  afterAll(() => f.close());
  const start = (provider: string, opts: { redirect?: string } = {}) => f.begin(provider, opts);
  const toApp = f.toApp.bind(f);
  const signIn = f.signIn.bind(f);

  it('lists the providers that are on to admins, without secrets', async () => {
    const a = await call(t, 'GET', '/api/auth/oauth/providers', { headers: { 'x-api-key': t.adminKey } });
    expect(a.status).toBe(200);
    expect(a.body.providers).toEqual([
      { name: 'kc', type: 'oidc', issuer: oidc.issuer, clientId: 'plinth-web', scopes: ['openid', 'email', 'profile'] },
      { name: 'github', type: 'github', issuer: null, clientId: gh.clientId, scopes: ['read:user', 'user:email'] },
      {
        name: 'down',
        type: 'oidc',
        issuer: 'http://127.0.0.1:1',
        clientId: 'down',
        scopes: ['openid', 'email', 'profile'],
      },
      { name: 'mixup', type: 'oidc', issuer: gh.url, clientId: 'mixup', scopes: ['openid', 'email', 'profile'] },
    ]);
    expect(a.text).not.toContain(KC_SECRET);
    expect(a.text).not.toContain(gh.clientSecret);
    expectError(
      await call(t, 'GET', '/api/auth/oauth/providers', { headers: { apikey: t.anonKey } }),
      403,
      'FORBIDDEN',
    );
    expect(t.deps.oauth.publicConfig()).toEqual({
      oAuthProviders: ['github'],
      customOAuthProviders: ['kc', 'down', 'mixup'],
    });
    const pub = await call(t, 'GET', '/api/auth/public-config');
    expect(pub.body).toMatchObject({ oAuthProviders: ['github'], customOAuthProviders: ['kc', 'down', 'mixup'] });
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
    const { rows } = await t.deps.db.query<{ n: number }>(
      'select count(*)::int as n from auth.oauth_flows where state_hash = $1',
      [q.get('state')],
    );
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
    expect(a.body.user).toMatchObject({
      email: acct.email,
      emailVerified: true,
      providers: ['kc'],
      profile: { name: 'Kay Cee', avatar_url: acct.picture },
    });
    expect(a.body.refreshToken).toMatch(/^rt_/);
    const me = await call(t, 'GET', '/api/auth/user', { token: a.body.accessToken });
    expect(me.status).toBe(200);
    expect(me.body.user.id).toBe(a.body.user.id);
    const refreshed = await call(t, 'POST', '/api/auth/refresh', { body: { refreshToken: a.body.refreshToken } });
    expect(refreshed.status).toBe(200);
    // The account has no password: password sign-in cannot reach it.
    expectError(
      await call(t, 'POST', '/api/auth/signin', { body: { email: acct.email, password: '!none' } }),
      401,
      'INVALID_CREDENTIALS',
    );
    const again = await signIn('kc', { ...acct, name: 'Renamed' });
    expect(again.status).toBe(200);
    expect(again.body.user.id).toBe(a.body.user.id);
    const ids = await call(t, 'GET', '/api/auth/identities', { token: again.body.accessToken });
    expect(ids.status).toBe(200);
    expect(ids.body.identities).toEqual([
      {
        id: expect.any(String),
        provider: 'kc',
        email: acct.email,
        emailVerified: true,
        createdAt: expect.any(String),
        lastSignInAt: expect.any(String),
      },
    ]);
  });

  it('GitHub: the verified primary email, /user profile, and identities by GitHub id', async () => {
    const acct = ghAccount();
    const a = await signIn('github', acct);
    expect(a.status, a.text).toBe(200);
    expect(a.body.user).toMatchObject({
      email: acct.emails[1]!.email,
      emailVerified: true,
      providers: ['github'],
      profile: { name: 'Octo Cat', avatar_url: acct.avatar_url },
    });
    const { rows } = await t.deps.db.query<{ subject: string }>(
      'select subject from auth.identities where user_id = $1',
      [a.body.user.id],
    );
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
    const before = await t.deps.db.query<{ n: number }>(
      'select count(*)::int as n from auth.sessions where user_id = $1',
      [victim.userId],
    );
    const a = await signIn('kc', kcAccount({ email: victim.email, email_verified: false }));
    expectError(a, 409, 'OAUTH_EMAIL_NOT_VERIFIED');
    expect(a.body.accessToken).toBeUndefined();
    const gha = await signIn(
      'github',
      ghAccount({ emails: [{ email: victim.email, primary: true, verified: false }] }),
    );
    expectError(gha, 409, 'OAUTH_EMAIL_NOT_VERIFIED');
    // A verified secondary address is not the primary one: it does not link either.
    const ghb = await signIn(
      'github',
      ghAccount({
        emails: [
          { email: victim.email, primary: false, verified: true },
          { email: uniqueEmail('other'), primary: true, verified: false },
        ],
      }),
    );
    expect(ghb.status).toBe(200);
    expect(ghb.body.user.id).not.toBe(victim.userId);
    const ids = await t.deps.db.query('select 1 from auth.identities where user_id = $1', [victim.userId]);
    expect(ids.rows).toHaveLength(0);
    const after = await t.deps.db.query<{ n: number }>(
      'select count(*)::int as n from auth.sessions where user_id = $1',
      [victim.userId],
    );
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

  it('a verified provider email never removes the password of an unverified account: 409, kept; after a reset it links', async () => {
    const email = uniqueEmail('squat');
    const squatter = await call(t, 'POST', '/api/auth/signup', { body: { email, password: 'owner-pw-1' } });
    expect(squatter.body.user.emailVerified).toBe(false);
    const acct = kcAccount({ email });
    expectError(await signIn('kc', acct), 409, 'OAUTH_LINK_NEEDS_CONSENT');
    expect((await call(t, 'POST', '/api/auth/signin', { body: { email, password: 'owner-pw-1' } })).status).toBe(200);
    expect((await call(t, 'GET', '/api/auth/user', { token: squatter.body.accessToken })).status).toBe(200);
    const ids = await t.deps.db.query('select 1 from auth.identities where user_id = $1', [squatter.body.user.id]);
    expect(ids.rows).toHaveLength(0);
    // Once the address is verified (as the reset-password code does), the provider links.
    await t.deps.db.query('update auth.users set email_verified = true where id = $1', [squatter.body.user.id]);
    const b = await signIn('kc', acct);
    expect(b.body.user).toMatchObject({ id: squatter.body.user.id, providers: ['email', 'kc'] });
  });

  it('a verified look-alike provider email (full-width, ＠, spaces) never signs in as the owner of the plain one', async () => {
    const local = `victim${Date.now().toString(36)}`;
    const email = `${local}@example.com`;
    const owner = await call(t, 'POST', '/api/auth/signup', { body: { email, password: 'owner-pw-2' } });
    await t.deps.db.query('update auth.users set email_verified = true where id = $1', [owner.body.user.id]);
    const fullWidth = [...local].map((c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0)).join('');
    for (const look of [
      `${fullWidth}@example.com`,
      `${local}＠example.com`,
      ` ${email}`,
      `${email} `,
      `${email}\u200b`,
    ]) {
      const kc = await signIn('kc', kcAccount({ email: look }));
      expectError(kc, 400, 'OAUTH_EMAIL_INVALID');
      const gh = await signIn('github', ghAccount({ emails: [{ email: look, primary: true, verified: true }] }));
      expectError(gh, 400, 'OAUTH_EMAIL_INVALID');
    }
    const { rows } = await t.deps.db.query('select 1 from auth.identities where user_id = $1', [owner.body.user.id]);
    expect(rows).toHaveLength(0);
    expect((await call(t, 'POST', '/api/auth/signin', { body: { email, password: 'owner-pw-2' } })).status).toBe(200);
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
      expectError(
        { status: s.res.status, body: s.body, text: '', headers: s.res.headers },
        400,
        'REDIRECT_NOT_ALLOWED',
      );
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
    expectError(
      await call(t, 'POST', '/api/auth/oauth/exchange', { body: { code, code_verifier: f.verifier } }),
      400,
      'INVALID_OAUTH_CODE',
    );
    const g = await toApp('github', ghAccount());
    const gcode = g.back.searchParams.get('insforge_code')!;
    expect(
      (await call(t, 'POST', '/api/auth/oauth/exchange', { body: { code: gcode, code_verifier: g.verifier } })).status,
    ).toBe(200);
    expectError(
      await call(t, 'POST', '/api/auth/oauth/exchange', { body: { code: gcode, code_verifier: g.verifier } }),
      400,
      'INVALID_OAUTH_CODE',
    );
    expectError(
      await call(t, 'POST', '/api/auth/oauth/exchange', { body: { code: 'x', code_verifier: g.verifier } }),
      400,
      'INVALID_OAUTH_CODE',
    );
    expectError(await call(t, 'POST', '/api/auth/oauth/exchange', { body: { code: gcode } }), 400, 'INVALID_INPUT');
  });

  it('a code the provider refuses is a 400, an unreachable provider a 502', async () => {
    const f = await toApp('github', ghAccount());
    await t.deps.db.query(
      `update auth.oauth_flows set provider_code = 'forged' where code_expires_at is not null and exchanged_at is null`,
    );
    const a = await call(t, 'POST', '/api/auth/oauth/exchange', {
      body: { code: f.back.searchParams.get('insforge_code'), code_verifier: f.verifier },
    });
    expectError(a, 400, 'OAUTH_PROVIDER_REJECTED');
    expect(a.body.message).toContain('bad_verification_code');
    const k = await toApp('kc', kcAccount());
    await t.deps.db.query(
      `update auth.oauth_flows set provider_code = 'forged' where code_expires_at is not null and exchanged_at is null`,
    );
    const b = await call(t, 'POST', '/api/auth/oauth/exchange', {
      body: { code: k.back.searchParams.get('insforge_code'), code_verifier: k.verifier },
    });
    expectError(b, 400, 'OAUTH_PROVIDER_REJECTED');
    expect(b.body.message).toContain('invalid_grant');
    const down = await start('down');
    expect(down.res.status).toBe(502);
    expect(down.body.error).toBe('OAUTH_PROVIDER_UNAVAILABLE');
    expect(down.res.headers.getSetCookie()).toEqual([]);
    // A discovery document that names another issuer is not trusted (mix-up).
    const mixup = await start('mixup');
    expect(mixup.res.status).toBe(502);
    expect(mixup.body.message).toMatch(/names another issuer/);
  });

  it('two first sign-ins of one subject at once make one user', async () => {
    const claims = { sub: newSub(), email: uniqueEmail('twin'), email_verified: true };
    const tokens = await Promise.all([0, 1, 2].map(() => oidc.mintIdToken(claims, { audience: 'plinth-web' })));
    const answers = await Promise.all(
      tokens.map((token) => call(t, 'POST', '/api/auth/id-token', { body: { provider: 'kc', token } })),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(new Set(answers.map((a) => a.body.user.id)).size).toBe(1);
    const { rows } = await t.deps.db.query<{ n: number }>(
      'select count(*)::int as n from auth.identities where subject = $1',
      [claims.sub],
    );
    expect(rows[0]!.n).toBe(1);
  });

  it('an expired code is refused', async () => {
    const f = await toApp('kc', kcAccount());
    await t.deps.db.query(
      `update auth.oauth_flows set code_expires_at = now() - interval '1 second' where code_expires_at is not null and exchanged_at is null`,
    );
    expectError(
      await call(t, 'POST', '/api/auth/oauth/exchange', {
        body: { code: f.back.searchParams.get('insforge_code'), code_verifier: f.verifier },
      }),
      400,
      'INVALID_OAUTH_CODE',
    );
  });

  it('an ID token whose nonce is not the one of this sign-in is refused (401), and nobody is signed in', async () => {
    const acct = kcAccount();
    const f = await toApp('kc', acct);
    await t.deps.db.query(
      `update auth.oauth_flows set nonce = 'another-nonce' where code_expires_at is not null and exchanged_at is null`,
    );
    const a = await call(t, 'POST', '/api/auth/oauth/exchange', {
      body: { code: f.back.searchParams.get('insforge_code'), code_verifier: f.verifier },
    });
    expectError(a, 401, 'INVALID_ID_TOKEN');
    expect(a.body.message).toMatch(/nonce/);
    const { rows } = await t.deps.db.query('select 1 from auth.users where email = $1', [acct.email]);
    expect(rows).toHaveLength(0);
  });
});
