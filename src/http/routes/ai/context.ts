import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CallContext } from '../../../ai/gateway.js';
import { ClientGoneError } from '../../../ai/upstream.js';

/** The caller, and a signal that aborts the upstream call when the client disconnects. */
export function callContext(request: FastifyRequest, reply: FastifyReply): CallContext {
  const id = request.identity;
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return {
    caller:
      id.kind === 'user'
        ? { kind: 'user', userId: id.userId }
        : { kind: id.kind === 'anon' ? 'anon' : 'admin', userId: null },
    signal: controller.signal,
    logError: (err, msg) => request.log.error({ err }, msg),
  };
}

/**
 * Runs `fn`; when the client went away first there is nobody to answer: log it quietly and
 * tell Fastify not to send anything (rather than an "unhandled error" 500 to a closed socket).
 */
export async function unlessGone<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  fn: () => Promise<T>,
): Promise<T | undefined> {
  try {
    return await fn();
  } catch (err) {
    if (!(err instanceof ClientGoneError)) throw err;
    request.log.info('client closed the request before the AI answer');
    reply.hijack();
    return undefined;
  }
}
