import { Type } from '@fastify/type-provider-typebox';
import type { RoutePlugin } from '../../types.js';
import { authContext, requireUser } from '../../request-context.js';
import { FactorSchema, SDK_AUTH_ROUTE, SignedIn, UserSchema } from './schemas.js';

const FactorId = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
const TotpCode = Type.String({ pattern: '^[0-9]{6}$', description: 'The 6-digit code of the authenticator app.' });
const RecoveryCode = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'One of the recovery codes (xxxxx-xxxxx).',
});
const USER_ROUTE = { bodyLimit: 16 * 1024, config: { access: 'user' as const } };
const security = [{ bearer: [] }];
const tags = ['auth'];

/** MFA with TOTP: factors of the signed-in user, the sign-in challenge, recovery codes, the admin reset. */
export const authMfaRoutes: RoutePlugin<'auth'> = async (app, { deps }) => {
  const mfa = deps.auth.mfa;

  app.get(
    '/api/auth/mfa/factors',
    {
      ...USER_ROUTE,
      schema: {
        tags,
        summary: "The caller's MFA factors",
        security,
        response: { 200: Type.Object({ factors: Type.Array(FactorSchema()) }) },
      },
    },
    async (request) => ({ factors: await mfa.list(requireUser(request).userId) }),
  );

  app.post(
    '/api/auth/mfa/factors',
    {
      ...USER_ROUTE,
      schema: {
        tags,
        summary: 'Enrol a TOTP factor: its secret, otpauth:// URI and QR code (SVG), shown this once',
        description:
          'The factor is unverified until POST /api/auth/mfa/factors/{id}/verify. With an active factor already, needs an aal2 session.',
        security,
        body: Type.Object({
          factorType: Type.Optional(Type.Literal('totp')),
          friendlyName: Type.Optional(Type.String({ maxLength: 128 })),
          issuer: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
        }),
        response: {
          200: Type.Object({
            id: Type.String(),
            type: Type.Literal('totp'),
            friendlyName: Type.Union([Type.String(), Type.Null()]),
            secret: Type.String(),
            uri: Type.String(),
            qrCode: Type.String({ description: 'An SVG document' }),
            totp: Type.Object({ qr_code: Type.String(), secret: Type.String(), uri: Type.String() }),
          }),
        },
      },
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request) => mfa.enroll(requireUser(request), request.body),
  );

  app.post(
    '/api/auth/mfa/factors/:id/verify',
    {
      ...USER_ROUTE,
      schema: {
        tags,
        summary: 'Check a code: activates the factor, and answers a fresh session at aal2',
        description:
          "The caller's session ends and a new one at aal2 starts. The first activation also answers `recoveryCodes`, shown this once.",
        security,
        params: FactorId,
        body: Type.Object({ code: TotpCode }),
        response: {
          200: Type.Intersect([SignedIn, Type.Object({ recoveryCodes: Type.Optional(Type.Array(Type.String())) })]),
        },
      },
    },
    async (request) => mfa.verify(requireUser(request), request.params.id, request.body.code, authContext(request)),
  );

  app.delete(
    '/api/auth/mfa/factors/:id',
    {
      ...USER_ROUTE,
      schema: {
        tags,
        summary: 'Remove a factor; an active one needs a current code of it, or a recovery code',
        security,
        params: FactorId,
        body: Type.Object({ code: Type.Optional(TotpCode), recoveryCode: Type.Optional(RecoveryCode) }),
        response: { 200: Type.Object({ id: Type.String(), message: Type.String() }) },
      },
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request) => {
      await mfa.unenroll(requireUser(request), request.params.id, request.body);
      return { id: request.params.id, message: 'Factor removed.' };
    },
  );

  app.post(
    '/api/auth/mfa/challenge',
    {
      // A sign-in path: a client whose session lapsed may still send its old token along.
      ...SDK_AUTH_ROUTE,
      schema: {
        tags,
        summary: 'Finish a sign-in that answered mfaRequired: the challenge token and a code open a session at aal2',
        body: Type.Object({
          token: Type.String({ minLength: 1, maxLength: 128 }),
          factorId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
          code: Type.Optional(TotpCode),
          recoveryCode: Type.Optional(RecoveryCode),
        }),
        response: { 200: SignedIn },
      },
    },
    async (request) => mfa.challenge(request.body, authContext(request)),
  );

  app.post(
    '/api/auth/mfa/recovery-codes',
    {
      ...USER_ROUTE,
      schema: {
        tags,
        summary: 'New recovery codes (the old ones stop working); needs an aal2 session',
        security,
        response: { 200: Type.Object({ recoveryCodes: Type.Array(Type.String()) }) },
      },
    },
    async (request) => ({ recoveryCodes: await mfa.regenerateRecoveryCodes(requireUser(request)) }),
  );

  app.delete(
    '/api/auth/users/:id/factors',
    {
      config: { access: 'admin' as const },
      schema: {
        tags,
        summary: "Admin: remove all of a user's MFA factors and recovery codes",
        security: [{ apiKey: [] }],
        params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
        response: { 200: Type.Object({ message: Type.String(), deleted: Type.Integer(), user: UserSchema }) },
      },
    },
    async (request) => {
      const deleted = await mfa.adminReset(request.params.id);
      return {
        message: `${deleted} factor(s) removed; the user signs in with the first factor alone.`,
        deleted,
        user: await deps.auth.getUser(request.params.id),
      };
    },
  );
};
