import { Type } from '@fastify/type-provider-typebox';
import type { RoutePlugin } from '../../types.js';
import { AppError } from '../../../errors/index.js';
import { jsonBodyParser } from '../../json-body.js';
import {
  Email,
  GivenPassword,
  NewPassword,
  PUBLIC_AUTH_ROUTE,
  RefreshToken,
  SDK_AUTH_ROUTE,
  SignedIn,
  SignInAnswer,
  Success,
  UserSchema,
} from './schemas.js';
import { authContext, requireUser } from '../../request-context.js';
import { presentedCredential } from '../../../auth/identity.js';

/** Sign-up, sign-in, current user, refresh and sign-out. */
export const authSessionRoutes: RoutePlugin<'auth'> = async (app, { deps }) => {
  const auth = deps.auth;

  app.post(
    '/api/auth/signup',
    {
      ...PUBLIC_AUTH_ROUTE,
      schema: {
        tags: ['auth'],
        summary: 'Create an account; signs in at once unless email verification is required',
        body: Type.Object({
          email: Email,
          password: NewPassword,
          name: Type.Optional(Type.String({ maxLength: 256 })),
        }),
        response: {
          200: Type.Object({
            user: UserSchema,
            accessToken: Type.Union([Type.String(), Type.Null()]),
            refreshToken: Type.Union([Type.String(), Type.Null()]),
            requireEmailVerification: Type.Boolean(),
          }),
        },
      },
    },
    async (request) => auth.signUp(request.body, authContext(request)),
  );

  app.post(
    '/api/auth/signin',
    {
      ...PUBLIC_AUTH_ROUTE,
      schema: {
        tags: ['auth'],
        summary: 'Sign in with email and password',
        description:
          'A user with an active MFA factor gets {mfaRequired: true, challenge} instead of a session: finish with POST /api/auth/mfa/challenge.',
        body: Type.Object({ email: Email, password: GivenPassword }),
        response: { 200: SignInAnswer },
      },
    },
    async (request) => auth.signIn(request.body, authContext(request)),
  );

  app.get(
    '/api/auth/user',
    {
      // The session is checked in the user read itself (one query instead of two).
      config: { access: 'user', handlerChecksSession: true },
      schema: {
        tags: ['auth'],
        summary: 'The signed-in user',
        security: [{ bearer: [] }],
        response: { 200: Type.Object({ user: UserSchema }) },
      },
    },
    async (request) => ({ user: await auth.currentUser(requireUser(request)) }),
  );

  app.post(
    '/api/auth/refresh',
    {
      ...PUBLIC_AUTH_ROUTE,
      // The refresh token is the credential here: clients send their old, often expired, access
      // token along (the InsForge SDK always does), and that must not refuse the refresh.
      config: { access: 'open' },
      schema: {
        tags: ['auth'],
        summary: 'Trade a refresh token for a new access and refresh token (the old one is spent)',
        description:
          'The refresh token goes in the body as refreshToken or refresh_token; an access token sent along is ignored.',
        querystring: Type.Object({ client_type: Type.Optional(Type.String({ maxLength: 32 })) }),
        body: Type.Object({ refreshToken: Type.Optional(RefreshToken), refresh_token: Type.Optional(RefreshToken) }),
        response: { 200: SignedIn },
      },
      // No body at all (the cookie flow of browsers): validate it as an empty object.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request) => {
      const token = request.body.refreshToken ?? request.body.refresh_token;
      if (token === undefined) {
        throw new AppError('INVALID_INPUT', {
          message: 'Send the refresh token in the body as {"refreshToken": "..."} (or "refresh_token").',
          nextActions: 'Use the refreshToken that sign-in returned; without one, sign in again.',
        });
      }
      return auth.refresh(token);
    },
  );

  await app.register(signOutRoute, { deps });
};

/**
 * Sign-out is often sent with no body, sometimes with "Content-Type: application/json" and
 * still no body: both mean "no refresh token" here rather than a 400.
 */
const signOutRoute: RoutePlugin<'auth'> = async (app, { deps }) => {
  const auth = deps.auth;
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    if (body.toString().trim() === '') return done(null, {});
    jsonBodyParser(request, body, done);
  });
  // POST /api/auth/logout is the InsForge SDK's name for the same thing. The SDK signs out
  // with the last access token it holds, often expired: there, an authentic expired token
  // still ends its session (on /signout such a token stays a 401, as everywhere).
  for (const url of ['/api/auth/signout', '/api/auth/logout'])
    app.post(
      url,
      {
        ...(url === '/api/auth/logout' ? SDK_AUTH_ROUTE : PUBLIC_AUTH_ROUTE),
        schema: {
          tags: ['auth'],
          summary: 'End the session of the bearer access token (or of the refresh token in the body)',
          description:
            'The access token is refused everywhere from then on, and the refresh token no longer works. ' +
            'A client whose access token has expired can send {refreshToken} without a bearer token.',
          security: [{ bearer: [] }],
          querystring: Type.Object({ client_type: Type.Optional(Type.String({ maxLength: 32 })) }),
          body: Type.Object({ refreshToken: Type.Optional(RefreshToken) }),
          response: { 200: Success },
        },
        // No body at all: validate it as an empty object.
        preValidation: async (request) => {
          request.body ??= {};
        },
      },
      async (request) => {
        const id = request.identity;
        // Only set when the identity hook let an ended token through (logout).
        const presented = presentedCredential(request.headers) ?? { kind: 'none' as const };
        if (presented === 'malformed') throw new AppError('UNAUTHORIZED');
        if (id.kind === 'user') {
          await auth.signOutSession(id.sessionId);
        } else if (request.body?.refreshToken !== undefined) {
          await auth.signOutRefreshToken(request.body.refreshToken);
        } else if (id.kind === 'none' && presented.kind === 'bearer') {
          await auth.signOutExpiredToken(presented.value);
        } else {
          throw new AppError('UNAUTHORIZED', {
            message: 'Sign-out needs the user access token (or the refresh token) of the session to end.',
          });
        }
        return { success: true, message: 'Signed out: the session has ended.' };
      },
    );
};
