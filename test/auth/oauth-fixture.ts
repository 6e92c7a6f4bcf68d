import { expect } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import type { Backend } from '../helpers/db.js';
import { call } from '../helpers/http.js';
import { uniqueEmail } from './util.js';
import { OidcServer, type OidcAccount } from './oidc-server.js';
import { GitHubServer, type GitHubAccount } from './github-server.js';
import { Browser } from './browser.js';
import { randomToken, s256 } from '../../src/auth/oauth/flow.js';

export const APP = 'http://app.test/auth/callback';
export const KC_SECRET = 'kc-client-secret-0123456789';
let subjects = 0;
export const newSub = () => `sub-${Date.now().toString(36)}-${subjects++}`;

export const kcAccount = (over: Partial<OidcAccount> = {}): OidcAccount => ({
  sub: newSub(),
  email: uniqueEmail('kc'),
  email_verified: true,
  name: 'Kay Cee',
  picture: 'https://img.example.com/kc.png',
  ...over,
});

export const ghAccount = (over: Partial<GitHubAccount> = {}): GitHubAccount => ({
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

/**
 * Plinth with four providers: `kc` (a real oidc-provider), `github` (a server speaking
 * GitHub's wire format), `down` (nothing listens) and `mixup` (its discovery names another
 * issuer), and the steps of a browser sign-in.
 */
export class OAuthFixture {
  t!: TestApp;
  readonly oidc = new OidcServer();
  readonly gh = new GitHubServer();

  /** `env`: more settings of the server (SMTP, anonymous sign-in…). */
  async start(backend: Backend, env: Record<string, string> = {}): Promise<void> {
    await Promise.all([this.oidc.listen(), this.gh.listen()]);
    this.t = await startApp(backend, {
      ...env,
      OAUTH_PROVIDERS: 'kc,github,down,mixup',
      // A discovery document that names another issuer.
      OAUTH_MIXUP_ISSUER: this.gh.url,
      OAUTH_MIXUP_CLIENT_ID: 'mixup',
      OAUTH_MIXUP_CLIENT_SECRET: 'mixup-secret',
      OAUTH_KC_ISSUER: this.oidc.issuer,
      OAUTH_KC_CLIENT_ID: 'plinth-web',
      OAUTH_KC_CLIENT_SECRET: KC_SECRET,
      OAUTH_KC_ID_TOKEN_AUDIENCES: 'plinth-mobile',
      OAUTH_GITHUB_CLIENT_ID: this.gh.clientId,
      OAUTH_GITHUB_CLIENT_SECRET: this.gh.clientSecret,
      OAUTH_GITHUB_AUTH_URL: `${this.gh.url}/login/oauth`,
      OAUTH_GITHUB_API_URL: `${this.gh.url}/api`,
      // Nothing listens on port 1: discovery fails.
      OAUTH_DOWN_ISSUER: 'http://127.0.0.1:1',
      OAUTH_DOWN_CLIENT_ID: 'down',
      OAUTH_DOWN_CLIENT_SECRET: 'down-secret',
      AUTH_REDIRECT_URLS: `${APP},http://app.test/native/*`,
    });
    await this.oidc.configure({
      clientId: 'plinth-web',
      clientSecret: KC_SECRET,
      redirectUris: [`${this.t.url}/api/auth/oauth/kc/callback`],
    });
  }

  async close(): Promise<void> {
    await this.t?.close();
    await Promise.all([this.oidc.close(), this.gh.close()]);
  }

  /** Starts a sign-in in a fresh browser; answers the browser, the app's verifier and the start answer. */
  async begin(provider: string, opts: { redirect?: string; browser?: Browser } = {}) {
    const browser = opts.browser ?? new Browser();
    const verifier = randomToken();
    const q = new URLSearchParams({ redirect_uri: opts.redirect ?? APP, code_challenge: s256(verifier) });
    const res = await browser.get(`${this.t.url}/api/auth/oauth/${provider}?${q}`);
    const body = await res.json();
    return { browser, verifier, res, body };
  }

  /** Runs the browser part through the provider and back to the app; answers the app URL. */
  async toApp(provider: 'kc' | 'github', login: OidcAccount | GitHubAccount | null) {
    if (provider === 'kc') this.oidc.nextLogin = login as OidcAccount | null;
    else this.gh.nextLogin = login as GitHubAccount | null;
    const s = await this.begin(provider);
    expect(s.res.status, JSON.stringify(s.body)).toBe(200);
    const { location } = await s.browser.follow(s.body.authUrl, 'http://app.test/');
    expect(location).not.toBeNull();
    return { ...s, back: new URL(location!) };
  }

  /** The whole flow, ending with the app's POST /api/auth/oauth/exchange. */
  async signIn(provider: 'kc' | 'github', login: OidcAccount | GitHubAccount) {
    const f = await this.toApp(provider, login);
    const code = f.back.searchParams.get('insforge_code');
    expect(code, f.back.toString()).toBeTruthy();
    return call(this.t, 'POST', '/api/auth/oauth/exchange?client_type=mobile', {
      body: { code, code_verifier: f.verifier },
    });
  }
}
