import { list, raw, str, url, type Reader } from './reader.js';

/** One sign-in provider as configured: any OpenID Connect issuer, or GitHub's OAuth 2. */
export interface OAuthProviderConfig {
  /** Lower-case name used in paths: /api/auth/oauth/{name}. */
  name: string;
  kind: 'oidc' | 'github';
  /** OIDC: the issuer, discovered at `<issuer>/.well-known/openid-configuration`. */
  issuer: string | null;
  clientId: string;
  clientSecret: string;
  scopes: string[];
  /** Further accepted `aud` values for POST /api/auth/id-token (e.g. a mobile client id). */
  idTokenAudiences: string[];
  /** GitHub: where /authorize and /access_token live, and the REST API (overridable for tests). */
  authUrl: string | null;
  apiUrl: string | null;
}

export interface OAuthConfig {
  providers: OAuthProviderConfig[];
  /** Allowed app redirect URLs after sign-in (AUTH_REDIRECT_URLS); a trailing `*` matches a path prefix. */
  redirectUrls: string[];
}

const NAME = /^[a-z][a-z0-9-]{0,31}$/;
/** Path segments of /api/auth/oauth/* that are not providers. */
const RESERVED = new Set(['providers', 'exchange', 'custom', 'callback']);

/** Reads OAUTH_PROVIDERS, OAUTH_<NAME>_* and AUTH_REDIRECT_URLS, reporting every problem. */
export function readOAuth(r: Reader): OAuthConfig {
  const names = list(r, 'OAUTH_PROVIDERS') ?? [];
  const providers: OAuthProviderConfig[] = [];
  const seen = new Set<string>();
  for (const rawName of names) {
    const name = rawName.toLowerCase();
    if (!NAME.test(name) || RESERVED.has(name)) {
      r.problems.push(
        `OAUTH_PROVIDERS: "${rawName}" is not a valid provider name (a letter, then up to 31 letters, digits or hyphens; not ${[...RESERVED].join(', ')})`,
      );
      continue;
    }
    if (seen.has(name)) {
      r.problems.push(`OAUTH_PROVIDERS names "${name}" twice`);
      continue;
    }
    seen.add(name);
    const p = readProvider(r, name);
    if (p) providers.push(p);
  }
  return { providers, redirectUrls: readRedirectUrls(r) };
}

function readProvider(r: Reader, name: string): OAuthProviderConfig | null {
  const prefix = `OAUTH_${name.toUpperCase().replace(/-/g, '_')}_`;
  const issuer = url(r, `${prefix}ISSUER`, ['https:', 'http:']);
  const github = name === 'github' && raw(r, `${prefix}ISSUER`) === undefined;
  const clientId = str(r, `${prefix}CLIENT_ID`);
  const clientSecret = str(r, `${prefix}CLIENT_SECRET`);
  const missing = [!clientId && `${prefix}CLIENT_ID`, !clientSecret && `${prefix}CLIENT_SECRET`].filter(Boolean);
  if (!github && !issuer && raw(r, `${prefix}ISSUER`) === undefined)
    missing.unshift(`${prefix}ISSUER (the OpenID issuer URL, e.g. https://accounts.google.com)`);
  if (missing.length) {
    r.problems.push(`OAUTH_PROVIDERS names "${name}", which needs ${missing.join(' and ')}`);
    return null;
  }
  const scopes = (str(r, `${prefix}SCOPES`) ?? (github ? 'read:user user:email' : 'openid email profile'))
    .split(/[\s,]+/)
    .filter(Boolean);
  if (!github && !scopes.includes('openid'))
    r.problems.push(`${prefix}SCOPES must include "openid" (got "${scopes.join(' ')}")`);
  return {
    name,
    kind: github ? 'github' : 'oidc',
    issuer: github ? null : issuer,
    clientId: clientId!,
    clientSecret: clientSecret!,
    scopes,
    idTokenAudiences: list(r, `${prefix}ID_TOKEN_AUDIENCES`) ?? [],
    authUrl: github ? (url(r, `${prefix}AUTH_URL`, ['https:', 'http:']) ?? 'https://github.com/login/oauth') : null,
    apiUrl: github ? (url(r, `${prefix}API_URL`, ['https:', 'http:']) ?? 'https://api.github.com') : null,
  };
}

/**
 * Each entry is an absolute http(s) URL without query or fragment. It matches a redirect URL
 * with the same origin and exactly the same path, or, when it ends in `*`, any path starting
 * with what comes before the `*`. Host wildcards are refused on purpose.
 */
function readRedirectUrls(r: Reader): string[] {
  const entries = list(r, 'AUTH_REDIRECT_URLS') ?? [];
  const ok: string[] = [];
  for (const entry of entries) {
    const prefix = entry.endsWith('*') ? entry.slice(0, -1) : entry;
    let u: URL | null = null;
    try {
      u = new URL(prefix);
    } catch {
      u = null;
    }
    if (
      !u ||
      !['http:', 'https:'].includes(u.protocol) ||
      u.search ||
      u.hash ||
      u.username ||
      u.password ||
      prefix.includes('*')
    ) {
      r.problems.push(
        `AUTH_REDIRECT_URLS: "${entry}" must be an absolute http(s) URL without query, fragment or credentials; only a trailing * is a wildcard, for paths (e.g. https://app.example.com/auth/*), never for hosts`,
      );
      continue;
    }
    ok.push(entry);
  }
  return ok;
}
