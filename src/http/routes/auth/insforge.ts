import { Type } from '@fastify/type-provider-typebox';
import { publicAuthConfig } from '../../../auth/public-config.js';
import type { RoutePlugin } from '../../types.js';
import { AppError } from '../../../errors/index.js';
import { authContext, requireUser } from '../../request-context.js';
import {
  Code,
  Email,
  GivenPassword,
  NewPassword,
  Profile,
  SDK_AUTH_ROUTE,
  SignInAnswer,
  Success,
  UserSchema,
} from './schemas.js';

const tags = ['auth'];
/** `?client_type=mobile`: the SDK's server mode. Plinth always returns the refresh token in the body. */
const ClientType = Type.Object({ client_type: Type.Optional(Type.String({ maxLength: 32 })) });
const Name = Type.String({ maxLength: 256 });
const ProfileAnswer = Type.Object({ id: Type.String({ format: 'uuid' }), profile: Profile });
const MAX_PROFILE_KEYS = 50;

/**
 * The auth paths of the InsForge SDK (`@insforge/sdk`), beside the spec's own: sign-up on
 * POST /api/auth/users, sign-in on POST /api/auth/sessions, the current session, profiles,
 * the public auth settings and the sign-in code. Answers use the SDK's shapes.
 */
export const authInsforgeRoutes: RoutePlugin<'auth' | 'credentials' | 'oauth'> = async (app, { deps }) => {
  const auth = deps.auth;

  app.post(
    '/api/auth/users',
    {
      ...SDK_AUTH_ROUTE,
      schema: {
        tags,
        summary: 'Sign up (anon key or no credential), or create a user (admin key)',
        description:
          'Without a credential or with the anon key this is POST /api/auth/signup. With the admin key it creates the ' +
          'account with no session and no mail: emailVerified says whether the address counts as verified.',
        querystring: ClientType,
        body: Type.Object({
          email: Email,
          password: NewPassword,
          name: Type.Optional(Name),
          emailVerified: Type.Optional(Type.Boolean({ description: 'Admin only.' })),
        }),
        response: {
          200: Type.Object({
            user: UserSchema,
            accessToken: Type.Union([Type.String(), Type.Null()]),
            refreshToken: Type.Union([Type.String(), Type.Null()]),
            requireEmailVerification: Type.Boolean(),
          }),
          201: Type.Object({ user: UserSchema }),
        },
      },
    },
    async (request, reply) => {
      const { email, password, name, emailVerified } = request.body;
      if (request.identity.kind === 'admin') {
        return reply.status(201).send({ user: await auth.createUser({ email, password, name, emailVerified }) });
      }
      return auth.signUp({ email, password, name }, authContext(request));
    },
  );

  app.post(
    '/api/auth/sessions',
    {
      ...SDK_AUTH_ROUTE,
      schema: {
        tags,
        summary: 'Sign in with a password, or with an emailed sign-in code (method "otp")',
        querystring: ClientType,
        body: Type.Object({
          email: Email,
          password: Type.Optional(GivenPassword),
          otp: Type.Optional(Code),
          method: Type.Optional(Type.Union([Type.Literal('password'), Type.Literal('otp')])),
          name: Type.Optional(Name),
        }),
        response: { 200: SignInAnswer },
      },
    },
    async (request) => {
      const { email, password, otp, method } = request.body;
      if (method === 'otp' || (method === undefined && otp !== undefined && password === undefined)) {
        if (otp === undefined)
          throw new AppError('INVALID_INPUT', {
            message: 'Sign-in with method "otp" needs the 6-digit code as "otp".',
          });
        return auth.signInWithCode({ email, code: otp }, authContext(request));
      }
      if (password === undefined)
        throw new AppError('INVALID_INPUT', { message: 'Send {email, password}, or {email, otp, method: "otp"}.' });
      return auth.signIn({ email, password }, authContext(request));
    },
  );

  app.get(
    '/api/auth/sessions/current',
    {
      config: { access: 'any', handlerChecksSession: true },
      schema: {
        tags,
        summary: 'The signed-in user of the bearer token (null for the anon or admin key)',
        security: [{ bearer: [] }],
        response: { 200: Type.Object({ user: Type.Union([UserSchema, Type.Null()]) }) },
      },
    },
    async (request) => {
      const id = request.identity;
      return { user: id.kind === 'user' ? await auth.currentUser(id) : null };
    },
  );

  app.get(
    '/api/auth/profiles/:userId',
    {
      config: { access: 'any' },
      schema: {
        tags,
        summary: "A user's public profile (id and profile, never the email)",
        params: Type.Object({ userId: Type.String({ format: 'uuid' }) }),
        response: { 200: ProfileAnswer },
      },
    },
    async (request) => auth.profileOf(request.params.userId),
  );

  app.patch(
    '/api/auth/profiles/current',
    {
      bodyLimit: 16 * 1024,
      config: { access: 'user' },
      schema: {
        tags,
        summary: "Merge keys into the signed-in user's profile (a null value removes a key)",
        security: [{ bearer: [] }],
        body: Type.Object({
          profile: Type.Record(Type.String({ maxLength: 64 }), Type.Unknown(), { maxProperties: MAX_PROFILE_KEYS }),
        }),
        response: { 200: ProfileAnswer },
      },
    },
    async (request) => {
      const { profile } = request.body;
      for (const k of ['name', 'avatar_url']) {
        const v = profile[k];
        if (v !== undefined && v !== null && typeof v !== 'string') {
          throw new AppError('INVALID_INPUT', { message: `profile.${k} must be a string (or null to remove it).` });
        }
      }
      return auth.updateProfile(requireUser(request).userId, profile);
    },
  );

  app.get(
    '/api/auth/public-config',
    {
      config: { access: 'public', ignoreEndedToken: true },
      schema: {
        tags,
        summary: 'The auth settings a sign-in form needs (InsForge SDK getPublicAuthConfig)',
        response: { 200: Type.Object({}, { additionalProperties: true }) },
      },
    },
    async () => publicAuthConfig(deps.oauth, auth.requireEmailVerification),
  );

  app.post(
    '/api/auth/email/send-otp',
    {
      ...SDK_AUTH_ROUTE,
      schema: {
        tags,
        summary: 'Mail a 6-digit sign-in code (answers the same for unknown addresses)',
        body: Type.Object({ email: Email }),
        response: { 200: Success },
      },
    },
    async (request) => {
      await auth.sendSignInCode(request.body.email, authContext(request));
      return { success: true, message: 'If the address belongs to an account, a sign-in code has been sent to it.' };
    },
  );

  app.post(
    '/api/auth/email/exchange-reset-password-token',
    {
      ...SDK_AUTH_ROUTE,
      schema: {
        tags,
        summary: 'Trade an emailed reset code for a one-time reset token (for reset-password {newPassword, otp})',
        body: Type.Object({ email: Email, code: Code }),
        response: { 200: Type.Object({ token: Type.String(), expiresAt: Type.String({ format: 'date-time' }) }) },
      },
    },
    async (request) => auth.exchangeResetCode(request.body),
  );

  app.post(
    '/api/auth/tokens/anon',
    {
      config: { access: 'admin', emptyJsonBody: true },
      schema: {
        tags,
        summary:
          "The anon key, under InsForge's name (its MCP server's get-anon-key); Plinth's anon key does not expire",
        security: [{ apiKey: [] }],
        response: { 200: Type.Object({ accessToken: Type.String(), message: Type.String() }) },
      },
    },
    async () => ({
      accessToken: deps.credentials.anonKey,
      message:
        'The anon key: send it as the apikey header (or the SDK anonKey) from clients; RLS policies decide what it may do.',
    }),
  );
};
