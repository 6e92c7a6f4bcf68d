import type { JWTPayload } from 'jose';
import type { OAuthProviderConfig } from '../../config/oauth.js';
import { AppError } from '../../errors/index.js';
import { field, unavailable, upstreamJson } from './upstream.js';
import { allowedAlgorithms, remoteKeySet, verifyIdToken, type KeySet } from './verify.js';

/** Who the provider says signed in. */
export interface ProviderProfile {
  subject: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
  avatarUrl: string | null;
  /** The verified claims of a native sign-in's ID token (to spend it once). */
  idTokenClaims?: JWTPayload;
}

/** What the authorization request carries (state and nonce are this flow's; PKCE S256). */
export interface AuthorizeParams {
  state: string;
  nonce: string;
  codeChallenge: string;
  callbackUrl: string;
}

export interface CompleteParams {
  code: string;
  verifier: string;
  callbackUrl: string;
  nonce: string;
}

export interface SignInProvider {
  readonly config: OAuthProviderConfig;
  authorizeUrl(p: AuthorizeParams): Promise<string>;
  /** Exchanges the authorization code at the provider and returns the verified profile. */
  complete(p: CompleteParams): Promise<ProviderProfile>;
  /** Verifies an ID token a native app got from the provider (OIDC only). */
  verifyIdToken(token: string, nonce: string | null): Promise<ProviderProfile>;
}

interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  userinfo_endpoint?: string;
  token_endpoint_auth_methods_supported?: string[];
  id_token_signing_alg_values_supported?: string[];
}

/** Builds the providers of the configuration, by name. Nothing is fetched until first use. */
export function buildProviders(configs: readonly OAuthProviderConfig[]): Map<string, SignInProvider> {
  return new Map(configs.map((c) => [c.name, c.kind === 'github' ? new GitHubProvider(c) : new OidcProvider(c)]));
}

function rejected(message: string): AppError {
  return new AppError('OAUTH_PROVIDER_REJECTED', { message: `The sign-in provider refused the request: ${message}` });
}

/** The token endpoint's answer, or OAUTH_PROVIDER_REJECTED with the provider's reason. */
async function tokenRequest(
  what: string,
  url: string,
  form: Record<string, string>,
  headers: Record<string, string> = {},
) {
  const a = await upstreamJson(what, url, { form, headers });
  const error = field(a.body, 'error');
  if (a.status >= 400 || error) {
    const desc = field(a.body, 'error_description');
    throw rejected(`${error ?? `HTTP ${a.status}`}${desc ? ` (${desc.slice(0, 200)})` : ''}.`);
  }
  return a.body as Record<string, unknown>;
}

/** Any OpenID Connect provider, found by discovery. */
export class OidcProvider implements SignInProvider {
  private discovered: Promise<{ doc: Discovery; keys: KeySet }> | null = null;

  constructor(readonly config: OAuthProviderConfig) {}

  /** The discovery document, fetched once (again after a failure) and checked. */
  private discover(): Promise<{ doc: Discovery; keys: KeySet }> {
    this.discovered ??= this.fetchDiscovery().catch((err) => {
      this.discovered = null;
      throw err;
    });
    return this.discovered;
  }

  private async fetchDiscovery(): Promise<{ doc: Discovery; keys: KeySet }> {
    const issuer = this.config.issuer!;
    const url = `${issuer}/.well-known/openid-configuration`;
    const a = await upstreamJson('OpenID discovery', url);
    const doc = a.body as Partial<Discovery>;
    if (a.status !== 200 || !doc || typeof doc !== 'object')
      throw unavailable(`discovery at ${url} answered HTTP ${a.status}.`);
    // The document must name the configured issuer (OpenID Connect Discovery 4.3).
    if (doc.issuer?.replace(/\/+$/, '') !== issuer)
      throw unavailable(`discovery at ${url} names another issuer (${String(doc.issuer)}).`);
    for (const k of ['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const) {
      if (!field(doc, k)) throw unavailable(`discovery at ${url} has no ${k}.`);
    }
    return { doc: doc as Discovery, keys: remoteKeySet(doc.jwks_uri!) };
  }

  async authorizeUrl(p: AuthorizeParams): Promise<string> {
    const { doc } = await this.discover();
    const u = new URL(doc.authorization_endpoint);
    u.search = new URLSearchParams({
      response_type: 'code',
      client_id: this.config.clientId,
      redirect_uri: p.callbackUrl,
      scope: this.config.scopes.join(' '),
      state: p.state,
      nonce: p.nonce,
      code_challenge: p.codeChallenge,
      code_challenge_method: 'S256',
    }).toString();
    return u.toString();
  }

  async complete(p: CompleteParams): Promise<ProviderProfile> {
    const { doc, keys } = await this.discover();
    const form: Record<string, string> = {
      grant_type: 'authorization_code',
      code: p.code,
      redirect_uri: p.callbackUrl,
      code_verifier: p.verifier,
    };
    const headers: Record<string, string> = {};
    const methods = doc.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
    if (methods.includes('client_secret_basic')) {
      // RFC 6749 2.3.1: id and secret are form-encoded before they are joined.
      const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
      headers.authorization = `Basic ${Buffer.from(`${enc(this.config.clientId)}:${enc(this.config.clientSecret)}`).toString('base64')}`;
    } else {
      Object.assign(form, { client_id: this.config.clientId, client_secret: this.config.clientSecret });
    }
    const tokens = await tokenRequest('The token endpoint', doc.token_endpoint, form, headers);
    const idToken = field(tokens, 'id_token');
    if (!idToken) throw rejected('the token answer has no id_token (is "openid" among the scopes?).');
    const claims = await verifyIdToken(idToken, keys, this.verifyOptions(doc, [this.config.clientId], p.nonce));
    const profile = profileOf(claims);
    const accessToken = field(tokens, 'access_token');
    if (!profile.email && doc.userinfo_endpoint && accessToken)
      return this.withUserInfo(doc.userinfo_endpoint, accessToken, profile);
    return profile;
  }

  /** Fills the profile from the UserInfo endpoint (some providers keep claims out of the ID token). */
  private async withUserInfo(
    endpoint: string,
    accessToken: string,
    profile: ProviderProfile,
  ): Promise<ProviderProfile> {
    const a = await upstreamJson('The userinfo endpoint', endpoint, {
      headers: { authorization: `Bearer ${accessToken}` },
    });
    if (a.status !== 200) throw rejected(`the userinfo endpoint answered HTTP ${a.status}.`);
    // OpenID Connect Core 5.3.2: the sub of UserInfo must be the ID token's.
    if (field(a.body, 'sub') !== profile.subject) throw rejected('the userinfo answer is for another subject.');
    const info = profileOf(a.body as Record<string, unknown>);
    return {
      subject: profile.subject,
      email: info.email,
      emailVerified: info.emailVerified,
      name: profile.name ?? info.name,
      avatarUrl: profile.avatarUrl ?? info.avatarUrl,
    };
  }

  async verifyIdToken(token: string, nonce: string | null): Promise<ProviderProfile> {
    const { doc, keys } = await this.discover();
    const audiences = [this.config.clientId, ...this.config.idTokenAudiences];
    const claims = await verifyIdToken(token, keys, this.verifyOptions(doc, audiences, nonce));
    return { ...profileOf(claims), idTokenClaims: claims };
  }

  private verifyOptions(doc: Discovery, audiences: string[], nonce: string | null) {
    return {
      issuer: doc.issuer,
      audiences,
      nonce,
      algorithms: allowedAlgorithms(doc.id_token_signing_alg_values_supported),
    };
  }
}

/** Standard claims to a profile; `email_verified` counts only when it is true (or "true"). */
function profileOf(claims: Record<string, unknown>): ProviderProfile {
  const verified = claims.email_verified === true || claims.email_verified === 'true';
  return {
    subject: String(claims.sub),
    email: field(claims, 'email'),
    emailVerified: verified,
    name: field(claims, 'name') ?? field(claims, 'preferred_username'),
    avatarUrl: field(claims, 'picture'),
  };
}

/** GitHub: OAuth 2 (with PKCE) and its REST API for the user and the verified emails. */
export class GitHubProvider implements SignInProvider {
  constructor(readonly config: OAuthProviderConfig) {}

  async authorizeUrl(p: AuthorizeParams): Promise<string> {
    const u = new URL(`${this.config.authUrl}/authorize`);
    u.search = new URLSearchParams({
      client_id: this.config.clientId,
      redirect_uri: p.callbackUrl,
      scope: this.config.scopes.join(' '),
      state: p.state,
      code_challenge: p.codeChallenge,
      code_challenge_method: 'S256',
      allow_signup: 'true',
    }).toString();
    return u.toString();
  }

  async complete(p: CompleteParams): Promise<ProviderProfile> {
    const tokens = await tokenRequest('GitHub', `${this.config.authUrl}/access_token`, {
      client_id: this.config.clientId,
      client_secret: this.config.clientSecret,
      code: p.code,
      redirect_uri: p.callbackUrl,
      code_verifier: p.verifier,
    });
    const token = field(tokens, 'access_token');
    if (!token) throw rejected('GitHub returned no access token.');
    const headers = {
      authorization: `Bearer ${token}`,
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
    };
    const [user, emails] = await Promise.all([
      upstreamJson('GitHub /user', `${this.config.apiUrl}/user`, { headers }),
      upstreamJson('GitHub /user/emails', `${this.config.apiUrl}/user/emails`, { headers }),
    ]);
    if (user.status !== 200) throw rejected(`GitHub /user answered HTTP ${user.status}.`);
    const u = user.body as Record<string, unknown>;
    if (typeof u.id !== 'number' && typeof u.id !== 'string') throw rejected('GitHub /user has no id.');
    // Only the primary address, and only GitHub's word that it is verified, ever links accounts.
    const list =
      emails.status === 200 && Array.isArray(emails.body) ? (emails.body as Array<Record<string, unknown>>) : [];
    const primary = list.find((e) => e.primary === true && typeof e.email === 'string');
    return {
      subject: String(u.id),
      email: primary ? String(primary.email) : field(u, 'email'),
      emailVerified: primary?.verified === true,
      name: field(u, 'name') ?? field(u, 'login'),
      avatarUrl: field(u, 'avatar_url'),
    };
  }

  async verifyIdToken(): Promise<ProviderProfile> {
    throw new AppError('INVALID_INPUT', {
      message: 'GitHub does not issue ID tokens, so it cannot be used with POST /api/auth/id-token.',
      nextActions: 'Sign in with GitHub through GET /api/auth/oauth/github, or use an OpenID Connect provider here.',
    });
  }
}
