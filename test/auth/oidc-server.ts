import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import Provider from 'oidc-provider';

export interface OidcAccount {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  picture?: string;
}

/**
 * A real OpenID provider (oidc-provider) on a random port: discovery, JWKS, authorization
 * with PKCE, token and userinfo endpoints, real signatures. The login screen is replaced by
 * an interaction that signs in `nextLogin` at once (the test picks who signs in). The test
 * also holds the signing key, to mint ID tokens with chosen claims (expired, other audience)
 * that the provider's own JWKS verifies.
 */
export class OidcServer {
  issuer = '';
  nextLogin: OidcAccount | null = null;
  private readonly accounts = new Map<string, OidcAccount>();
  private server: Server | null = null;
  private provider: any = null;
  private key: CryptoKey | null = null;
  readonly kid = 'test-key-1';

  /** Listens first (the issuer URL needs the port); `configure` then builds the provider. */
  async listen(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.issuer = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.issuer;
  }

  async configure(client: { clientId: string; clientSecret: string; redirectUris: string[] }): Promise<void> {
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    this.key = privateKey;
    const jwk = { ...(await exportJWK(privateKey)), kid: this.kid, alg: 'RS256', use: 'sig' };
    this.provider = new Provider(this.issuer, {
      clients: [
        {
          client_id: client.clientId,
          client_secret: client.clientSecret,
          redirect_uris: client.redirectUris,
          grant_types: ['authorization_code'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_basic',
        },
      ],
      jwks: { keys: [jwk] },
      cookies: { keys: ['oidc-test-cookie-key'] },
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'picture'] },
      features: { devInteractions: { enabled: false } },
      interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
      pkce: { required: () => true },
      ttl: { Interaction: 600, Grant: 600, Session: 600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
      findAccount: async (_ctx: unknown, id: string) => {
        const account = this.accounts.get(id);
        return account && { accountId: id, claims: async () => ({ ...account }) };
      },
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      if (req.url?.startsWith('/interaction/')) return await this.interact(req, res);
      this.provider.callback()(req, res);
    } catch (err) {
      res.statusCode = 500;
      res.end(String(err));
    }
  }

  /** Signs in `nextLogin` and grants the asked scopes, as a user clicking through would. */
  private async interact(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const details = await this.provider.interactionDetails(req, res);
    const account = this.nextLogin;
    if (!account) {
      await this.provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'The user said no.' },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    this.accounts.set(account.sub, account);
    const grant = new this.provider.Grant({ accountId: account.sub, clientId: details.params.client_id });
    grant.addOIDCScope(details.params.scope);
    const grantId = await grant.save();
    await this.provider.interactionFinished(
      req,
      res,
      { login: { accountId: account.sub }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
  }

  /** An ID token signed with the provider's key, with the given claims over sane defaults. */
  async mintIdToken(
    claims: Record<string, unknown>,
    opts: { audience: string; expiresIn?: number; issuer?: string },
  ): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    // A jti per token, as real providers (Google, Microsoft) send: tokens minted in the same
    // second with the same claims are still different tokens.
    return new SignJWT({ iat: now, exp: now + (opts.expiresIn ?? 600), jti: randomUUID(), ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: this.kid, typ: 'JWT' })
      .setIssuer(opts.issuer ?? this.issuer)
      .setAudience(opts.audience)
      .sign(this.key!);
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
