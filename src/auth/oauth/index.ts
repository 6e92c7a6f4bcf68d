import type { OAuthConfig } from '../../config/oauth.js';
import type { Db } from '../../db/types.js';
import { AppError } from '../../errors/index.js';
import type { AuthContext, AuthService } from '../service.js';
import { toUser, userById, type User, type UserRow } from '../users.js';
import type { LogWriter } from '../../logs/index.js';
import { identityExists, listIdentities, resolveUser, unlinkIdentity, type Identity } from './accounts.js';
import {
  claimAppCode,
  claimState,
  createFlow,
  issueAppCode,
  PKCE_CHALLENGE,
  pruneFlows,
  s256,
  STATE_TTL_SECONDS,
} from './flow.js';
import { pruneSpentIdTokens, spendIdToken } from './verify.js';
import { buildProviders, type ProviderProfile, type SignInProvider } from './providers.js';
import { isRedirectAllowed } from './redirects.js';

/** Providers the InsForge SDK calls by name (GET /api/auth/oauth/{name}); others are "custom". */
const BUILT_IN = new Set([
  'google',
  'github',
  'discord',
  'linkedin',
  'facebook',
  'instagram',
  'tiktok',
  'apple',
  'x',
  'spotify',
  'microsoft',
]);

/** The browser-binding cookie of a sign-in in progress. */
export const FLOW_COOKIE = 'plinth_oauth';
export const FLOW_COOKIE_PATH = '/api/auth/oauth';
export const FLOW_COOKIE_MAX_AGE = STATE_TTL_SECONDS;

export interface OAuthSignedIn {
  user: User;
  accessToken: string;
  refreshToken: string;
}

export interface OAuthServiceDeps {
  db: Db;
  auth: AuthService;
  config: OAuthConfig;
  /** PUBLIC_URL: the origin the provider sends the browser back to (else the request's own). */
  publicUrl: string | null;
  /** Where sign-ins and unlinks are logged (source auth). */
  logs?: LogWriter;
}

/** Sign-in with OpenID Connect providers and GitHub: the flow, ID tokens, identities. Framework-free. */
export class OAuthService {
  private readonly providers: Map<string, SignInProvider>;
  private lastPrune = 0;
  private lastSpentPrune = 0;

  constructor(private readonly deps: OAuthServiceDeps) {
    this.providers = buildProviders(deps.config.providers);
  }

  /** The providers that are on, without secrets (admin). */
  listProviders() {
    return this.deps.config.providers.map((p) => ({
      name: p.name,
      type: p.kind,
      issuer: p.issuer,
      clientId: p.clientId,
      scopes: p.scopes,
    }));
  }

  /** For GET /api/auth/public-config: the SDK's names (`oAuthProviders`) and the others. */
  publicConfig(): { oAuthProviders: string[]; customOAuthProviders: string[] } {
    const names = this.deps.config.providers.map((p) => p.name);
    return {
      oAuthProviders: names.filter((n) => BUILT_IN.has(n)),
      customOAuthProviders: names.filter((n) => !BUILT_IN.has(n)),
    };
  }

  private provider(name: string): SignInProvider {
    const p = this.providers.get(name.toLowerCase());
    if (!p) {
      throw new AppError('OAUTH_PROVIDER_NOT_FOUND', {
        message: `No sign-in provider "${name.slice(0, 64)}" is configured on this server${this.providers.size ? ` (configured: ${[...this.providers.keys()].join(', ')})` : ''}.`,
      });
    }
    return p;
  }

  /**
   * Starts a sign-in: checks the app's redirect URL and PKCE challenge, stores the flow, and
   * returns the provider's authorization URL and the secret for the browser cookie.
   */
  async start(input: { provider: string; redirectUri: string; codeChallenge: string; origin: string }) {
    const provider = this.provider(input.provider);
    const redirectUri = isRedirectAllowed(this.deps.config.redirectUrls, input.redirectUri);
    if (!PKCE_CHALLENGE.test(input.codeChallenge)) {
      throw new AppError('INVALID_INPUT', {
        message: 'code_challenge must be the base64url SHA-256 (S256) of the PKCE code verifier: 43 characters.',
        nextActions:
          'Make a random code verifier of 43-128 characters, send BASE64URL(SHA256(verifier)) as code_challenge, and keep the verifier for POST /api/auth/oauth/exchange.',
      });
    }
    const name = provider.config.name;
    const callbackUrl = `${this.deps.publicUrl ?? input.origin}/api/auth/oauth/${name}/callback`;
    if (Date.now() - this.lastPrune > 60_000) {
      // Old flows go at most once a minute per process, not on every start.
      this.lastPrune = Date.now();
      await pruneFlows(this.deps.db);
    }
    const flow = await createFlow(this.deps.db, {
      provider: name,
      redirectUri,
      callbackUrl,
      codeChallenge: input.codeChallenge,
    });
    const authUrl = await provider.authorizeUrl({
      state: flow.state,
      nonce: flow.nonce,
      codeChallenge: s256(flow.providerVerifier),
      callbackUrl,
    });
    return { authUrl, browserSecret: flow.browserSecret, secureCookie: callbackUrl.startsWith('https:') };
  }

  /**
   * The provider sent the browser back. A bad, spent or expired state, or one started in
   * another browser, is an error here (there is no trusted place to send the browser);
   * otherwise the browser goes back to the app, with Plinth's one-time code or the error.
   */
  async callback(input: {
    provider: string;
    state?: string;
    code?: string;
    error?: string;
    errorDescription?: string;
    browserSecret: string | null;
  }): Promise<string> {
    const name = this.provider(input.provider).config.name;
    if (!input.state)
      throw new AppError('INVALID_OAUTH_STATE', { message: 'The provider sent the browser back without a state.' });
    const claimed = await claimState(this.deps.db, {
      state: input.state,
      provider: name,
      browserSecret: input.browserSecret,
    });
    if ('reason' in claimed) {
      throw new AppError('INVALID_OAUTH_STATE', {
        message:
          claimed.reason === 'browser'
            ? 'This sign-in was started in another browser, or the browser did not send its sign-in cookie (cookies blocked?). It has been cancelled.'
            : 'This sign-in is unknown, expired (it lasts 10 minutes) or already completed.',
      });
    }
    const back = new URL(claimed.row.redirect_uri);
    if (input.error || !input.code) {
      back.searchParams.set('error', (input.error ?? 'invalid_request').slice(0, 64));
      back.searchParams.set(
        'error_description',
        (
          input.errorDescription ?? (input.error ? 'The provider refused the sign-in.' : 'The provider sent no code.')
        ).slice(0, 256),
      );
      return back.toString();
    }
    back.searchParams.set('insforge_code', await issueAppCode(this.deps.db, input.state, input.code));
    return back.toString();
  }

  /** Trades Plinth's one-time code and the app's PKCE verifier for a session. */
  async exchange(input: { code: string; codeVerifier: string }, ctx: AuthContext): Promise<OAuthSignedIn> {
    const row = await claimAppCode(this.deps.db, input.code, input.codeVerifier);
    if (!row?.provider_code) throw new AppError('INVALID_OAUTH_CODE');
    const provider = this.provider(row.provider);
    const profile = await provider.complete({
      code: row.provider_code,
      verifier: row.provider_verifier,
      callbackUrl: row.callback_url,
      nonce: row.nonce,
    });
    return this.signIn(provider, profile, ctx);
  }

  /** Native sign-in: an ID token the app got from the provider itself. */
  async signInWithIdToken(
    input: { provider: string; token: string; nonce?: string },
    ctx: AuthContext,
  ): Promise<OAuthSignedIn> {
    const provider = this.provider(input.provider);
    const profile = await provider.verifyIdToken(input.token, input.nonce ?? null);
    if (Date.now() - this.lastSpentPrune > 60_000) {
      this.lastSpentPrune = Date.now();
      await pruneSpentIdTokens(this.deps.db);
    }
    // Each ID token signs in once, nonce or not: a leaked or logged token cannot be replayed.
    if (!profile.idTokenClaims || !(await spendIdToken(this.deps.db, profile.idTokenClaims))) {
      throw new AppError('INVALID_ID_TOKEN', {
        message: 'The ID token is not valid: it has already been used (each ID token signs in once).',
        nextActions: 'Get a fresh ID token from the provider (sign in with it again) and send that one.',
      });
    }
    return this.signIn(provider, profile, ctx);
  }

  private async signIn(provider: SignInProvider, profile: ProviderProfile, ctx: AuthContext): Promise<OAuthSignedIn> {
    const linked = this.deps.logs ? await identityExists(this.deps.db, provider.config.name, profile.subject) : true;
    const row = await resolveUser(this.deps.db, provider.config.name, profile);
    if (!linked)
      this.deps.logs?.write('auth', 'info', 'oauth identity linked', {
        userId: row.id,
        provider: provider.config.name,
        email: profile.email,
      });
    if (this.deps.auth.requireEmailVerification && !row.email_verified) {
      throw new AppError('EMAIL_NOT_VERIFIED', {
        message: `${provider.config.name} has not verified the email of this account, and this server requires a verified email.`,
        nextActions:
          'Verify the email with the provider and sign in again, or ask for a code with POST /api/auth/email/send-verification.',
      });
    }
    const s = await this.deps.auth.startSession(row, ctx);
    this.deps.logs?.write('auth', 'info', 'sign-in', {
      userId: row.id,
      method: 'oauth',
      provider: provider.config.name,
      ip: ctx.ip,
    });
    return { ...s, user: await this.userOf(row) };
  }

  /** The user as every auth answer shows it, read again for its linked providers. */
  private async userOf(row: UserRow): Promise<User> {
    return toUser((await userById(this.deps.db, row.id)) ?? row);
  }

  /**
   * Converts the caller's anonymous account by linking a provider, from an ID token or the
   * one-time code of a redirect sign-in: the account keeps its id and data and gets the
   * provider's identity and email (AnonymousUsers.adoptIdentity decides).
   */
  async linkAnonymous(
    caller: { userId: string; sessionId: string },
    input: { provider: string; token: string; nonce?: string } | { code: string; codeVerifier: string },
    ctx: AuthContext,
  ): Promise<OAuthSignedIn> {
    let provider: SignInProvider;
    let profile: ProviderProfile;
    if ('code' in input) {
      const row = await claimAppCode(this.deps.db, input.code, input.codeVerifier);
      if (!row?.provider_code) throw new AppError('INVALID_OAUTH_CODE');
      provider = this.provider(row.provider);
      profile = await provider.complete({
        code: row.provider_code,
        verifier: row.provider_verifier,
        callbackUrl: row.callback_url,
        nonce: row.nonce,
      });
    } else {
      provider = this.provider(input.provider);
      profile = await provider.verifyIdToken(input.token, input.nonce ?? null);
    }
    return this.deps.auth.anonymous.adoptIdentity(caller, provider.config.name, profile, ctx);
  }

  identities(userId: string): Promise<Identity[]> {
    return listIdentities(this.deps.db, userId);
  }

  async unlink(userId: string, identityId: string): Promise<void> {
    await unlinkIdentity(this.deps.db, userId, identityId);
    this.deps.logs?.write('auth', 'info', 'oauth identity unlinked', { userId, identityId });
  }
}
