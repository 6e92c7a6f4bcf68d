import { Type } from '@fastify/type-provider-typebox';
import type { RoutePlugin } from '../../types.js';
import { authContext } from '../../request-context.js';
import { AppError } from '../../../errors/index.js';
import { Code, Email, NewPassword, SDK_AUTH_ROUTE, SignInAnswer, Success } from './schemas.js';

const SENT = 'If the address belongs to an account that needs it, a code has been sent to it.';
const ClientType = Type.Object({ client_type: Type.Optional(Type.String({ maxLength: 32 })) });
const SIX_DIGITS = /^[0-9]{6}$/;

/** The 6-digit code of a body that names it `code` (Plinth) or `otp` (InsForge SDK). */
function codeOf(body: { code?: string; otp?: string }): string {
  const code = body.code ?? body.otp;
  if (code === undefined || !SIX_DIGITS.test(code)) {
    throw new AppError('INVALID_INPUT', { message: 'Send the 6-digit code from the email as "code" (or "otp").' });
  }
  return code;
}

/** Email verification and password reset with 6-digit codes sent by email. */
export const authEmailRoutes: RoutePlugin<'auth'> = async (app, { deps }) => {
  const auth = deps.auth;

  app.post(
    '/api/auth/email/send-verification',
    {
      ...SDK_AUTH_ROUTE,
      schema: {
        tags: ['auth'],
        summary: 'Send a new verification code (answers the same for unknown addresses)',
        body: Type.Object({ email: Email }),
        response: { 200: Success },
      },
    },
    async (request) => {
      await auth.sendVerification(request.body.email, authContext(request));
      return { success: true, message: SENT };
    },
  );

  app.post(
    '/api/auth/email/verify',
    {
      ...SDK_AUTH_ROUTE,
      schema: {
        tags: ['auth'],
        summary: 'Verify the email address with the emailed code; signs the user in',
        description: 'The code goes in `code` (or `otp`, as the InsForge SDK sends it).',
        querystring: ClientType,
        body: Type.Object({ email: Email, code: Type.Optional(Code), otp: Type.Optional(Code) }),
        response: { 200: SignInAnswer },
      },
    },
    async (request) =>
      auth.verifyEmail({ email: request.body.email, code: codeOf(request.body) }, authContext(request)),
  );

  app.post(
    '/api/auth/email/send-reset-password',
    {
      ...SDK_AUTH_ROUTE,
      schema: {
        tags: ['auth'],
        summary: 'Send a password reset code (answers the same for unknown addresses)',
        body: Type.Object({ email: Email }),
        response: { 200: Success },
      },
    },
    async (request) => {
      await auth.sendPasswordReset(request.body.email, authContext(request));
      return { success: true, message: SENT };
    },
  );

  app.post(
    '/api/auth/email/reset-password',
    {
      ...SDK_AUTH_ROUTE,
      schema: {
        tags: ['auth'],
        summary: "Set a new password with the emailed code; ends the user's other sessions",
        description:
          'Either {email, code, newPassword} with the emailed code, or {newPassword, otp} with the reset token of ' +
          "POST /api/auth/email/exchange-reset-password-token (the InsForge SDK's two-step reset).",
        body: Type.Object({
          email: Type.Optional(Email),
          code: Type.Optional(Code),
          otp: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
          newPassword: NewPassword,
        }),
        response: { 200: Success },
      },
    },
    async (request) => {
      const id = request.identity;
      const caller = id.kind === 'user' ? { userId: id.userId, sessionId: id.sessionId } : null;
      const { email, newPassword, otp } = request.body;
      if (email !== undefined) await auth.resetPassword({ email, newPassword, code: codeOf(request.body) }, caller);
      else if (otp !== undefined) await auth.resetPasswordWithToken({ token: otp, newPassword }, caller);
      else
        throw new AppError('INVALID_INPUT', {
          message: 'Send {email, code, newPassword}, or {newPassword, otp} with a reset token.',
        });
      return { success: true, message: 'The password has been changed; other sessions have been signed out.' };
    },
  );
};
