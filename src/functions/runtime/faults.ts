import { AppError } from '../../errors/index.js';
import type { InvokeRequest } from './types.js';

// How a host's failures are told apart: transport errors, the outcome header a host (or a
// remote runtime) answers with instead of the function, and faults of the function itself.

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** A request that failed before the function answered, with the transport's error as cause. */
export class HostUnreachable extends Error {
  constructor(override readonly cause: unknown) {
    super('function host unreachable');
  }

  /** The transport's error code (ECONNREFUSED, UND_ERR_SOCKET…). */
  get code(): string | undefined {
    return (this.cause as { code?: string } | null)?.code;
  }

  /** The host took longer than the call's timeout to answer. */
  get timedOut(): boolean {
    return TIMEOUT_CODES.has(this.code ?? '');
  }
}

/** The host had another version loaded (it restarted): deploy again. */
export class NotDeployed extends Error {}

export const timeoutError = (ms: number) =>
  new AppError('FUNCTION_TIMEOUT', { message: `The function did not finish within ${ms} ms.` });

/** What a host's outcome header means, when it answered for the function instead of relaying it. */
export function outcomeError(outcome: string, timeoutMs: number): Error {
  if (outcome === 'threw' || outcome === 'load-error') return new AppError('FUNCTION_ERROR');
  if (outcome === 'timeout') return timeoutError(timeoutMs);
  if (outcome === 'memory') return new AppError('FUNCTION_MEMORY_LIMIT');
  if (outcome === 'not-deployed') return new NotDeployed();
  return new HostUnreachable(new Error(`host outcome ${outcome}`));
}

/** A fault of the function that the relay found: FUNCTION_ERROR, and a line in its logs. */
export function functionFault(message: string, log: ((message: string) => void) | undefined): AppError {
  log?.(message);
  return new AppError('FUNCTION_ERROR', {
    message: 'The function answered with a response Plinth cannot relay; its logs show why.',
  });
}

/** The client stopped sending the body (it went away): its failure, not the host's. */
export function bodyCut(req: InvokeRequest): boolean {
  return req.body !== null && req.body.destroyed && !req.body.readableEnded;
}

/** The answer to a module its host refused to load (the local pool and a remote runtime alike). */
export function loadRefused(r: { kind: 'export' | 'threw'; message: string }): AppError {
  if (r.kind === 'export') return new AppError('INVALID_FUNCTION_CODE', { message: r.message });
  return new AppError('FUNCTION_ERROR', { message: 'The function failed to load; its logs show why.' });
}
