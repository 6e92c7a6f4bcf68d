import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { Pool, type Dispatcher } from 'undici';
import { AppError } from '../errors/index.js';
import type { InvokeRequest, InvokeResponse, RuntimeFunction } from './runtime.js';

/** Where a host is reached: a connection pool to it, and how its protocol paths are written. */
export interface HostTarget {
  dispatcher: Dispatcher;
  /** Prepended to the host protocol paths (a remote runtime routes by function). */
  pathPrefix?: string;
  extraHeaders?: Record<string, string>;
}

/**
 * Keep-alive connections to a host: a local host's Unix socket, or a remote runtime's origin
 * (http or https). undici rather than node:http's client: it costs the API server about
 * half the CPU per relayed call (docs/decisions.md).
 */
export function hostPool(where: { socketPath: string } | { origin: string }, connections = 256): Pool {
  return 'socketPath' in where ? new Pool('http://localhost', { socketPath: where.socketPath, connections }) : new Pool(where.origin, { connections });
}

// Hop-by-hop headers belong to one connection and are never forwarded (RFC 9110 §7.6.1).
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'upgrade', 'te', 'trailer', 'http2-settings']);

export function dropHopByHop(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  return out;
}

const SMALL_BODY = 64 * 1024;
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

const timeoutError = (ms: number) => new AppError('FUNCTION_TIMEOUT', { message: `The function did not finish within ${ms} ms.` });

/** What a host's outcome header means, when it answered for the function instead of relaying it. */
function outcomeError(outcome: string, timeoutMs: number): Error {
  if (outcome === 'threw' || outcome === 'load-error') return new AppError('FUNCTION_ERROR');
  if (outcome === 'timeout') return timeoutError(timeoutMs);
  if (outcome === 'memory') return new AppError('FUNCTION_MEMORY_LIMIT');
  if (outcome === 'not-deployed') return new NotDeployed();
  return new HostUnreachable(new Error(`host outcome ${outcome}`));
}

/** The client stopped sending the body (it went away): its failure, not the host's. */
function bodyCut(req: InvokeRequest): boolean {
  return req.body !== null && req.body.destroyed && !req.body.readableEnded;
}

/**
 * Sends one invocation to a host and resolves with the function's response, streamed.
 * The wall-time limit covers the whole call: before the response starts it is a 504;
 * once streaming, the stream is cut. Either way `onTimeout` stops the runaway function.
 */
export function sendToHost(
  target: HostTarget,
  fn: RuntimeFunction,
  req: InvokeRequest,
  opts: { timeoutMs: number; onTimeout: () => void },
): Promise<InvokeResponse> {
  return new Promise((resolve, reject) => {
    let controller: Dispatcher.DispatchController | null = null;
    let settled = false;
    let timedOut = false;
    let head: Omit<InvokeResponse, 'body'> | null = null;
    let chunks: Buffer[] | null = null; // a small body, read whole
    let stream: Readable | null = null; // any other body, streamed
    const settle = (fail: Error | null, res?: InvokeResponse) => {
      if (settled) return;
      settled = true;
      if (fail) reject(fail);
      else resolve(res!);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      opts.onTimeout();
      settle(timeoutError(opts.timeoutMs));
      controller?.abort(new Error('function timed out'));
    }, opts.timeoutMs);

    // Node already answered any "Expect: 100-continue", and undici refuses to send it on.
    const { expect: _answered, ...forwarded } = dropHopByHop(req.headers);
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        if (timedOut) c.abort(new Error('function timed out'));
      },
      onResponseStart(c, status, headers) {
        const outcome = headers['x-plinth-runtime-outcome'];
        if (outcome) {
          // The host answered for the function; its body is drained and dropped.
          clearTimeout(timer);
          return settle(outcomeError(String(outcome), opts.timeoutMs));
        }
        head = { status, headers: dropHopByHop(headers) };
        // A small body of known length is read whole: sending a Buffer costs the API server
        // less than piping a stream.
        if (Number(headers['content-length'] ?? NaN) <= SMALL_BODY) {
          chunks = [];
          return;
        }
        stream = new Readable({
          read: () => c.resume(),
          destroy: (err, cb) => {
            clearTimeout(timer);
            if (!c.aborted && !stream!.readableEnded) c.abort(err ?? new Error('response closed'));
            cb(err);
          },
        });
        settle(null, { ...head, body: stream });
      },
      onResponseData(c, chunk) {
        if (chunks) chunks.push(chunk);
        else if (stream && !stream.push(chunk)) c.pause();
      },
      onResponseEnd() {
        clearTimeout(timer);
        if (chunks && head) settle(null, { ...head, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) });
        else stream?.push(null);
      },
      onResponseError(_c, err) {
        clearTimeout(timer);
        settle(bodyCut(req) ? new AppError('MALFORMED_REQUEST', { message: 'The request body ended before it was complete.' }) : new HostUnreachable(err));
        stream?.destroy(err);
      },
    };
    target.dispatcher.dispatch(
      {
        method: req.method,
        path: `${target.pathPrefix ?? ''}/_plinth/invoke`,
        headers: { ...forwarded, ...target.extraHeaders, 'x-plinth-runtime-version': fn.version, 'x-plinth-runtime-url': req.url },
        body: req.body,
        // The wall-time limit above covers the whole call, streaming included.
        headersTimeout: 0,
        bodyTimeout: 0,
      },
      handler,
    );
  });
}

/**
 * One request of the host protocol other than an invocation (deploy, health): its status
 * and text. Transport failures and timeouts reject with HostUnreachable.
 */
async function hostCall(
  target: HostTarget,
  o: { method: 'GET' | 'PUT'; path: string; json?: unknown; timeoutMs: number },
): Promise<{ status: number; text: string }> {
  try {
    const res = await target.dispatcher.request({
      method: o.method,
      path: `${target.pathPrefix ?? ''}${o.path}`,
      headers: { ...target.extraHeaders, ...(o.json === undefined ? {} : { 'content-type': 'application/json' }) },
      body: o.json === undefined ? null : JSON.stringify(o.json),
      headersTimeout: o.timeoutMs,
      bodyTimeout: o.timeoutMs,
    });
    return { status: res.statusCode, text: await res.body.text() };
  } catch (err) {
    throw new HostUnreachable(err);
  }
}

/** Resolves when a host (or a remote runtime) answers its health path with 200. */
export async function checkHost(target: HostTarget, timeoutMs: number): Promise<void> {
  const { status } = await hostCall(target, { method: 'GET', path: '/_plinth/health', timeoutMs });
  if (status !== 200) throw new HostUnreachable(new Error(`health answered ${status}`));
}

/** A loaded version: `socket` is where a local host's worker takes its calls. */
export type DeployResult = { loaded: true; socket: string | null } | { loaded: false };

/**
 * Loads a function version into a host; `loaded: false` when the module failed to load (the
 * host logged why). Transport failures reject with HostUnreachable.
 */
export async function deployTo(
  target: HostTarget,
  payload: { version: string; code: string; secrets: Record<string, string> },
  timeoutMs: number,
): Promise<DeployResult> {
  const { status, text } = await hostCall(target, { method: 'PUT', path: '/_plinth/deploy', json: payload, timeoutMs });
  if (status === 422) return { loaded: false };
  if (status !== 200) throw new HostUnreachable(new Error(`deploy answered ${status}`));
  let socket: unknown = null;
  try {
    socket = (JSON.parse(text) as { socket?: unknown }).socket ?? null;
  } catch {
    // a remote runtime's answer carries no socket
  }
  return { loaded: true, socket: typeof socket === 'string' ? socket : null };
}
