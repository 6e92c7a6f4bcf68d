import { Type } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoutePlugin } from '../../types.js';
import { FLOW_COOKIE, FLOW_COOKIE_MAX_AGE, FLOW_COOKIE_PATH } from '../../../auth/oauth/index.js';
import { authContext, requireUser } from '../../request-context.js';
import { publicOrigin } from '../../origin.js';
import { PUBLIC_AUTH_ROUTE, Success, UserSchema } from './schemas.js';

const OAuthSignedIn = Type.Object({ user: UserSchema, accessToken: Type.String(), refreshToken: Type.String() });
const ProviderName = Type.String({ minLength: 1, maxLength: 64 });
const StartQuery = Type.Object({
  redirect_uri: Type.String({
    minLength: 1,
    maxLength: 2048,
    description: 'Where the app wants the browser back: must match AUTH_REDIRECT_URLS.',
  }),
  code_challenge: Type.String({
    minLength: 1,
    maxLength: 128,
    description: "BASE64URL(SHA256(code_verifier)) of the app's PKCE verifier.",
  }),
  code_challenge_method: Type.Optional(Type.Literal('S256')),
});
const ClientType = Type.Object({ client_type: Type.Optional(Type.String({ maxLength: 32 })) });
const Identity = Type.Object({
  id: Type.String({ format: 'uuid' }),
  provider: Type.String(),
  email: Type.Union([Type.String(), Type.Null()]),
  emailVerified: Type.Boolean(),
  createdAt: Type.String({ format: 'date-time' }),
  lastSignInAt: Type.String({ format: 'date-time' }),
});

/** The value of one cookie of the request, or null. */
function cookie(request: FastifyRequest, name: string): string | null {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim() || null;
  }
  return null;
}

function setFlowCookie(reply: FastifyReply, value: string, maxAge: number, secure: boolean): void {
  reply.header(
    'set-cookie',
    `${FLOW_COOKIE}=${value}; Path=${FLOW_COOKIE_PATH}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`,
  );
  reply.header('cache-control', 'no-store');
}

/** Sign-in with OpenID Connect providers and GitHub (docs/auth.md), and the user's identities. */
export const oauthRoutes: RoutePlugin<'config' | 'oauth'> = async (app, { deps }) => {
  const oauth = deps.oauth;

  app.get(
    '/api/auth/oauth/providers',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['auth'],
        summary: 'The sign-in providers that are on (no secrets)',
        security: [{ apiKey: [] }],
        response: {
          200: Type.Object({
            providers: Type.Array(
              Type.Object({
                name: Type.String(),
                type: Type.Union([Type.Literal('oidc'), Type.Literal('github')]),
                issuer: Type.Union([Type.String(), Type.Null()]),
                clientId: Type.String(),
                scopes: Type.Array(Type.String()),
              }),
            ),
          }),
        },
      },
    },
    async () => ({ providers: oauth.listProviders() }),
  );

  const start = async (
    request: FastifyRequest<{
      Params: { provider: string };
      Querystring: { redirect_uri: string; code_challenge: string };
    }>,
    reply: FastifyReply,
  ) => {
    const s = await oauth.start({
      provider: request.params.provider,
      redirectUri: request.query.redirect_uri,
      codeChallenge: request.query.code_challenge,
      origin: publicOrigin(request, deps.config.publicUrl),
    });
    setFlowCookie(reply, s.browserSecret, FLOW_COOKIE_MAX_AGE, s.secureCookie);
    // A browser that opened this URL itself is sent on; the SDK's fetch gets {authUrl}.
    if (request.headers['sec-fetch-mode'] === 'navigate') return reply.redirect(s.authUrl, 302);
    return { authUrl: s.authUrl };
  };
  const startSchema = {
    tags: ['auth'],
    summary: 'Start a provider sign-in (authorization code with PKCE): answers {authUrl} and sets the flow cookie',
    params: Type.Object({ provider: ProviderName }),
    querystring: StartQuery,
    response: { 200: Type.Object({ authUrl: Type.String() }) },
  };
  app.get('/api/auth/oauth/:provider', { config: { access: 'public' }, schema: startSchema }, start);
  app.get(
    '/api/auth/oauth/custom/:provider',
    {
      config: { access: 'public' },
      schema: { ...startSchema, summary: 'The same, for a provider the SDK does not know by name' },
    },
    start,
  );

  app.get(
    '/api/auth/oauth/:provider/callback',
    {
      config: { access: 'public' },
      schema: {
        tags: ['auth'],
        summary:
          "The provider's redirect back: checks state and cookie, then sends the browser to the app with ?insforge_code=",
        params: Type.Object({ provider: ProviderName }),
        querystring: Type.Object({
          state: Type.Optional(Type.String({ maxLength: 512 })),
          code: Type.Optional(Type.String({ maxLength: 4096 })),
          error: Type.Optional(Type.String({ maxLength: 256 })),
          error_description: Type.Optional(Type.String({ maxLength: 1024 })),
        }),
      },
    },
    async (request, reply) => {
      // The cookie is spent either way.
      setFlowCookie(reply, '', 0, request.protocol === 'https');
      const location = await oauth.callback({
        provider: request.params.provider,
        state: request.query.state,
        code: request.query.code,
        error: request.query.error,
        errorDescription: request.query.error_description,
        browserSecret: cookie(request, FLOW_COOKIE),
      });
      return reply.redirect(location, 302);
    },
  );

  app.post(
    '/api/auth/oauth/exchange',
    {
      ...PUBLIC_AUTH_ROUTE,
      schema: {
        tags: ['auth'],
        summary: "Trade the one-time code of the redirect and the app's PKCE verifier for a session",
        querystring: ClientType,
        body: Type.Object({
          code: Type.String({ minLength: 1, maxLength: 256 }),
          code_verifier: Type.String({ minLength: 1, maxLength: 256 }),
        }),
        response: { 200: OAuthSignedIn },
      },
    },
    async (request) =>
      oauth.exchange({ code: request.body.code, codeVerifier: request.body.code_verifier }, authContext(request)),
  );

  app.post(
    '/api/auth/id-token',
    {
      ...PUBLIC_AUTH_ROUTE,
      schema: {
        tags: ['auth'],
        summary: 'Sign in with an ID token a native app got from an OpenID Connect provider',
        querystring: ClientType,
        body: Type.Object({
          provider: ProviderName,
          token: Type.String({ minLength: 1, maxLength: 8192 }),
          nonce: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
        }),
        response: { 200: OAuthSignedIn },
      },
    },
    async (request) => oauth.signInWithIdToken(request.body, authContext(request)),
  );

  app.get(
    '/api/auth/identities',
    {
      config: { access: 'user' },
      schema: {
        tags: ['auth'],
        summary: "The signed-in user's provider identities",
        security: [{ bearer: [] }],
        response: { 200: Type.Object({ identities: Type.Array(Identity) }) },
      },
    },
    async (request) => ({ identities: await oauth.identities(requireUser(request).userId) }),
  );

  app.delete(
    '/api/auth/identities/:id',
    {
      config: { access: 'user' },
      schema: {
        tags: ['auth'],
        summary: 'Unlink one of your identities (never the last way to sign in)',
        security: [{ bearer: [] }],
        params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
        response: { 200: Success },
      },
    },
    async (request) => {
      await oauth.unlink(requireUser(request).userId, request.params.id);
      return { success: true, message: 'The identity was unlinked: it can no longer sign in to this account.' };
    },
  );
};
