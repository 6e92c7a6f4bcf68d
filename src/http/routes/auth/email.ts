import { Type } from '@fastify/type-provider-typebox';
import type { RoutePlugin } from '../../types.js';
import { authContext } from '../../request-context.js';
import { Code, Email, NewPassword, PUBLIC_AUTH_ROUTE, SignedIn, Success } from './schemas.js';

const SENT = 'If the address belongs to an account that needs it, a code has been sent to it.';

/** Email verification and password reset with 6-digit codes sent by email. */
export const authEmailRoutes: RoutePlugin = async (app, { deps }) => {
  const auth = deps.auth;

  app.post(
    '/api/auth/email/send-verification',
    {
      ...PUBLIC_AUTH_ROUTE,
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
      ...PUBLIC_AUTH_ROUTE,
      schema: {
        tags: ['auth'],
        summary: 'Verify the email address with the emailed code; signs the user in',
        body: Type.Object({ email: Email, code: Code }),
        response: { 200: SignedIn },
      },
    },
    async (request) => auth.verifyEmail(request.body, authContext(request)),
  );

  app.post(
    '/api/auth/email/send-reset-password',
    {
      ...PUBLIC_AUTH_ROUTE,
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
      ...PUBLIC_AUTH_ROUTE,
      schema: {
        tags: ['auth'],
        summary: "Set a new password with the emailed code; ends the user's other sessions",
        body: Type.Object({ email: Email, code: Code, newPassword: NewPassword }),
        response: { 200: Success },
      },
    },
    async (request) => {
      const id = request.identity;
      await auth.resetPassword(request.body, id.kind === 'user' ? { userId: id.userId, sessionId: id.sessionId } : null);
      return { success: true, message: 'The password has been changed; other sessions have been signed out.' };
    },
  );
};
