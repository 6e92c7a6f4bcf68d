import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './index.js';
import { isRedirectAllowed } from '../auth/oauth/redirects.js';

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('OAuth configuration', () => {
  it('is off by default', () => {
    expect(loadConfig({}).auth.oauth).toEqual({ providers: [], redirectUrls: [] });
  });

  it('reads OIDC providers by name, the GitHub preset, scopes and extra ID-token audiences', () => {
    const c = loadConfig({
      OAUTH_PROVIDERS: 'Google, github ,my-kc',
      OAUTH_GOOGLE_ISSUER: 'https://accounts.google.com/',
      OAUTH_GOOGLE_CLIENT_ID: 'gid',
      OAUTH_GOOGLE_CLIENT_SECRET: 'gsecret',
      OAUTH_GOOGLE_ID_TOKEN_AUDIENCES: 'ios-id,android-id',
      OAUTH_GITHUB_CLIENT_ID: 'ghid',
      OAUTH_GITHUB_CLIENT_SECRET: 'ghsecret',
      OAUTH_MY_KC_ISSUER: 'https://kc.example.com/realms/app',
      OAUTH_MY_KC_CLIENT_ID: 'kc',
      OAUTH_MY_KC_CLIENT_SECRET: 'kcsecret',
      OAUTH_MY_KC_SCOPES: 'openid email',
      AUTH_REDIRECT_URLS: 'https://app.example.com/auth/callback, http://localhost:3000/*',
    }).auth.oauth;
    expect(c.providers.map((p) => [p.name, p.kind, p.issuer])).toEqual([
      ['google', 'oidc', 'https://accounts.google.com'],
      ['github', 'github', null],
      ['my-kc', 'oidc', 'https://kc.example.com/realms/app'],
    ]);
    expect(c.providers[0]!.scopes).toEqual(['openid', 'email', 'profile']);
    expect(c.providers[0]!.idTokenAudiences).toEqual(['ios-id', 'android-id']);
    expect(c.providers[1]).toMatchObject({
      scopes: ['read:user', 'user:email'],
      authUrl: 'https://github.com/login/oauth',
      apiUrl: 'https://api.github.com',
    });
    expect(c.providers[2]!.scopes).toEqual(['openid', 'email']);
    expect(c.redirectUrls).toEqual(['https://app.example.com/auth/callback', 'http://localhost:3000/*']);
  });

  it('names every problem at once, with the variable to set', () => {
    const p = problems({
      OAUTH_PROVIDERS: 'google,github,kc,bad_name,exchange,google',
      OAUTH_GOOGLE_CLIENT_ID: 'gid',
      OAUTH_GITHUB_CLIENT_SECRET: 'x',
      OAUTH_KC_ISSUER: 'ftp://kc',
      OAUTH_KC_CLIENT_ID: 'kc',
      OAUTH_KC_CLIENT_SECRET: 'kc',
      AUTH_REDIRECT_URLS:
        'https://*.example.com/cb,https://app.example.com/cb?x=1,/relative,https://app.example.com/a*/b',
    });
    const text = p.join('\n');
    expect(text).toContain('OAUTH_GOOGLE_ISSUER');
    expect(text).toContain('OAUTH_GOOGLE_CLIENT_SECRET');
    expect(text).toContain('OAUTH_GITHUB_CLIENT_ID');
    expect(text).toContain('OAUTH_KC_ISSUER must be a URL');
    expect(text).toContain('"bad_name" is not a valid provider name');
    expect(text).toContain('"exchange" is not a valid provider name');
    expect(text).toContain('names "google" twice');
    for (const bad of [
      'https://*.example.com/cb',
      'https://app.example.com/cb?x=1',
      '/relative',
      'https://app.example.com/a*/b',
    ]) {
      expect(text).toContain(`"${bad}"`);
    }
    expect(
      problems({
        OAUTH_PROVIDERS: 'kc',
        OAUTH_KC_ISSUER: 'https://kc',
        OAUTH_KC_CLIENT_ID: 'a',
        OAUTH_KC_CLIENT_SECRET: 'b',
        OAUTH_KC_SCOPES: 'email',
      }),
    ).toEqual(['OAUTH_KC_SCOPES must include "openid" (got "email")']);
  });
});

describe('redirect allow-list', () => {
  const list = ['https://app.example.com/auth/callback', 'https://app.example.com/native/*', 'http://localhost:3000*'];
  it.each([
    ['https://app.example.com/auth/callback', true],
    ['https://app.example.com/auth/callback?next=/x', true],
    ['https://app.example.com/native/', true],
    ['https://app.example.com/native/a/b', true],
    ['http://localhost:3000/anything', true],
    ['https://APP.example.com/auth/callback', true],
    ['https://app.example.com/auth/callback/', false],
    ['https://app.example.com/auth/callback#frag', false],
    ['https://app.example.com/native', false],
    ['https://app.example.com/nativex', false],
    ['https://app.example.com/native/../admin', false],
    ['http://app.example.com/auth/callback', false],
    ['https://app.example.com:444/auth/callback', false],
    ['https://app.example.com.evil.com/auth/callback', false],
    ['http://localhost:30001/x', false],
    ['https://user:pw@app.example.com/auth/callback', false],
    ['javascript://app.example.com/auth/callback', false],
    ['//app.example.com/auth/callback', false],
  ])('%s → %s', (url, ok) => {
    if (ok) expect(isRedirectAllowed(list, url)).toBe(new URL(url).toString());
    else expect(() => isRedirectAllowed(list, url)).toThrow(/AUTH_REDIRECT_URLS/);
  });

  it('allows nothing when AUTH_REDIRECT_URLS is unset', () => {
    expect(() => isRedirectAllowed([], 'https://app.example.com/')).toThrow(/not set/);
  });
});
