import { Type } from '@fastify/type-provider-typebox';
import type { RoutePlugin } from '../../types.js';
import { authContext, requireUser } from '../../request-context.js';
import { AppError } from '../../../errors/index.js';
import { Email, NewPassword, SDK_AUTH_ROUTE, SignedIn, SignInAnswer, Success } from './schemas.js';

const tags = ['auth'];

/** Anonymous sign-in and its conversion, magic links, and the admin cleanup of anonymous users. */
export const authPasswordlessRoutes: RoutePlugin<'auth' | 'oauth'> = async (app, { deps }) => {
  const auth = deps.auth;

  app.post(
    '/api/auth/signin/anonymous',
    {
      ...SDK_AUTH_ROUTE,
      schema: {
        tags,
        summary: 'Sign in as a new anonymous user (role authenticated, is_anonymous true); limited per IP',
        body: Type.Object({}),
        response: { 200: SignedIn },
      },
      // No body at all: validate it as an empty object.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request) => auth.anonymous.signIn(authContext(request)),
  );

  app.post(
    '/api/auth/anonymous/convert',
    {
      bodyLimit: 16 * 1024,
      config: { access: 'user' as const },
      schema: {
        tags,
        summary: 'Make the anonymous caller a permanent account with an email and password (same id, same data)',
        security: [{ bearer: [] }],
        body: Type.Object({
          email: Email,
          password: NewPassword,
          name: Type.Optional(Type.String({ maxLength: 256 })),
        }),
        response: { 200: Type.Intersect([SignedIn, Type.Object({ requireEmailVerification: Type.Boolean() })]) },
      },
    },
    async (request) => auth.anonymous.convert(requireUser(request), request.body, authContext(request)),
  );

  app.post(
    '/api/auth/anonymous/link',
    {
      bodyLimit: 16 * 1024,
      config: { access: 'user' as const },
      schema: {
        tags,
        summary: 'Make the anonymous caller a permanent account by linking a provider (same id, same data)',
        description:
          'Either {provider, token, nonce?} with an ID token of the provider (as POST /api/auth/id-token), or {code, code_verifier} ' +
          'with the one-time code of a redirect sign-in (as POST /api/auth/oauth/exchange).',
        security: [{ bearer: [] }],
        body: Type.Object({
          provider: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
          token: Type.Optional(Type.String({ minLength: 1, maxLength: 16_384 })),
          nonce: Type.Optional(Type.String({ maxLength: 256 })),
          code: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
          code_verifier: Type.Optional(Type.String({ minLength: 43, maxLength: 128 })),
        }),
        response: { 200: SignedIn },
      },
    },
    async (request) => {
      const b = request.body;
      const caller = requireUser(request);
      if (b.code !== undefined && b.code_verifier !== undefined && b.token === undefined) {
        return deps.oauth.linkAnonymous(caller, { code: b.code, codeVerifier: b.code_verifier }, authContext(request));
      }
      if (b.provider !== undefined && b.token !== undefined && b.code === undefined) {
        return deps.oauth.linkAnonymous(
          caller,
          { provider: b.provider, token: b.token, nonce: b.nonce },
          authContext(request),
        );
      }
      throw new AppError('INVALID_INPUT', {
        message: 'Send {provider, token} (an ID token) or {code, code_verifier} (a redirect sign-in), not both.',
        nextActions:
          'For a web sign-in, start it with GET /api/auth/oauth/{provider} and send the insforge_code of the redirect here.',
      });
    },
  );

  app.post(
    '/api/auth/magic-link',
    {
      ...SDK_AUTH_ROUTE,
      schema: {
        tags,
        summary: 'Mail a sign-in link to a known address (answers the same for unknown ones)',
        description:
          'The link is redirectTo (one of AUTH_REDIRECT_URLS) with ?magic_token=…; the app sends the token to POST /api/auth/magic-link/verify.',
        body: Type.Object({ email: Email, redirectTo: Type.String({ minLength: 1, maxLength: 2048 }) }),
        response: { 200: Success },
      },
    },
    async (request) => {
      await auth.magicLinks.send(request.body, authContext(request));
      return { success: true, message: 'If the address belongs to an account, a sign-in link has been sent to it.' };
    },
  );

  app.post(
    '/api/auth/magic-link/verify',
    {
      ...SDK_AUTH_ROUTE,
      schema: {
        tags,
        summary: 'Trade the token of a magic link for a session (or an MFA challenge)',
        body: Type.Object({ token: Type.String({ minLength: 1, maxLength: 256 }) }),
        response: { 200: SignInAnswer },
      },
    },
    async (request) => auth.magicLinks.verify(request.body.token, authContext(request)),
  );

  app.delete(
    '/api/auth/users/anonymous',
    {
      config: { access: 'admin' as const },
      schema: {
        tags,
        summary: 'Admin: delete anonymous users created more than olderThanDays days ago',
        security: [{ apiKey: [] }],
        querystring: Type.Object({ olderThanDays: Type.Integer({ minimum: 0, maximum: 36_500, default: 30 }) }),
        response: { 200: Type.Object({ message: Type.String(), deleted: Type.Integer() }) },
      },
    },
    async (request) => {
      const deleted = await auth.anonymous.cleanup(request.query.olderThanDays);
      return { message: `${deleted} anonymous user(s) deleted.`, deleted };
    },
  );
};
