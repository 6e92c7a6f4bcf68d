import type { FastifyRequest } from 'fastify';
import type { AuthContext } from '../auth/context.js';
import { AppError } from '../errors/index.js';

/** Who and where a request comes from, as the auth service records it (IP, user agent, log). */
export function authContext(request: FastifyRequest): AuthContext {
  const ua = request.headers['user-agent'];
  return { ip: request.ip, userAgent: typeof ua === 'string' ? ua : null, log: request.log };
}

/** The signed-in user calling, or 403 for an admin or anon caller. */
export function requireUser(request: FastifyRequest) {
  const id = request.identity;
  if (id.kind !== 'user') {
    throw new AppError('FORBIDDEN', {
      message: 'This endpoint needs a signed-in user, not an API key.',
      nextActions: 'Sign in and send the access token as "Authorization: Bearer <token>".',
    });
  }
  return id;
}
