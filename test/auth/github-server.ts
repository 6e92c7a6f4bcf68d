import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GitHubAccount {
  id: number;
  login: string;
  name: string | null;
  avatar_url: string;
  emails: Array<{ email: string; primary: boolean; verified: boolean }>;
}

/**
 * A small server speaking GitHub's OAuth wire format: /login/oauth/authorize (redirects back
 * with a code for `nextLogin`), /login/oauth/access_token (form in, JSON out, errors as 200
 * with {error} like GitHub, PKCE checked), /api/user and /api/user/emails with the bearer token.
 */
export class GitHubServer {
  url = '';
  nextLogin: GitHubAccount | null = null;
  readonly clientId = 'gh-client-id';
  readonly clientSecret = 'gh-client-secret';
  private server: Server | null = null;
  private readonly codes = new Map<string, { account: GitHubAccount; redirectUri: string; challenge: string }>();
  private readonly tokens = new Map<string, GitHubAccount>();

  async listen(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const u = new URL(req.url ?? '/', this.url);
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (u.pathname === '/.well-known/openid-configuration') {
      // Not GitHub's: a discovery document naming another issuer, for the mix-up test.
      return json(200, {
        issuer: 'https://evil.example.com',
        authorization_endpoint: `${this.url}/a`,
        token_endpoint: `${this.url}/t`,
        jwks_uri: `${this.url}/k`,
      });
    }
    if (u.pathname === '/login/oauth/authorize') {
      const q = u.searchParams;
      const back = new URL(q.get('redirect_uri')!);
      back.searchParams.set('state', q.get('state')!);
      if (q.get('client_id') !== this.clientId || !this.nextLogin) {
        back.searchParams.set('error', 'access_denied');
      } else {
        const code = randomBytes(10).toString('hex');
        this.codes.set(code, {
          account: this.nextLogin,
          redirectUri: q.get('redirect_uri')!,
          challenge: q.get('code_challenge') ?? '',
        });
        back.searchParams.set('code', code);
      }
      res.writeHead(302, { location: back.toString() });
      return void res.end();
    }
    if (u.pathname === '/login/oauth/access_token' && req.method === 'POST') {
      let raw = '';
      for await (const chunk of req) raw += chunk;
      const form = new URLSearchParams(raw);
      const grant = this.codes.get(form.get('code') ?? '');
      this.codes.delete(form.get('code') ?? '');
      if (form.get('client_id') !== this.clientId || form.get('client_secret') !== this.clientSecret)
        return json(200, { error: 'incorrect_client_credentials' });
      const verifier = form.get('code_verifier') ?? '';
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      if (!grant || grant.redirectUri !== form.get('redirect_uri') || grant.challenge !== challenge) {
        return json(200, {
          error: 'bad_verification_code',
          error_description: 'The code passed is incorrect or expired.',
        });
      }
      const token = `gho_${randomBytes(16).toString('hex')}`;
      this.tokens.set(token, grant.account);
      return json(200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
    }
    const account = this.tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
    if (u.pathname.startsWith('/api/') && !account) return json(401, { message: 'Bad credentials' });
    if (u.pathname === '/api/user') {
      return json(200, {
        id: account!.id,
        login: account!.login,
        name: account!.name,
        avatar_url: account!.avatar_url,
        email: null,
      });
    }
    if (u.pathname === '/api/user/emails')
      return json(
        200,
        account!.emails.map((e) => ({ ...e, visibility: null })),
      );
    json(404, { message: 'Not Found' });
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
