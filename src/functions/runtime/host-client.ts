import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { Pool, type Dispatcher } from 'undici';
import { AppError } from '../../errors/index.js';
import type { InvokeRequest, InvokeResponse, RuntimeFunction } from './types.js';

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
  // Set rather than taken from Node's --max-http-header-size, so the limit in the docs holds.
  const opts = { connections, maxHeaderSize: MAX_RESPONSE_HEADER_BYTES };
  return 'socketPath' in where ? new Pool('http://localhost', { socketPath: where.socketPath, ...opts }) : new Pool(where.origin, opts);
}

/** Most bytes of response header (names and values) a function may answer with. */
export const MAX_RESPONSE_HEADER_BYTES = 16 * 1024;

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

/** A fault of the function that the relay found: FUNCTION_ERROR, and a line in its logs. */
function functionFault(message: string, log: ((message: string) => void) | undefined): AppError {
  log?.(message);
  return new AppError('FUNCTION_ERROR', { message: 'The function answered with a response Plinth cannot relay; its logs show why.' });
}

/** The client stopped sending the body (it went away): its failure, not the host's. */
function bodyCut(req: InvokeRequest): boolean {
  return req.body !== null && req.body.destroyed && !req.body.readableEnded;
}

/** How a call is sent, and who is told about its failures. */
export interface SendOptions {
  timeoutMs: number;
  /** The call ran over its time: stop the runaway function. */
  onTimeout: () => void;
  /** Writes a line to the function's logs (a fault of the function that the relay found). */
  log?: (message: string) => void;
  /**
   * The host cut the response after its status and headers (its body failed, or the host
   * died): resolves with the error to report, an AppError. Default: the runtime's fault.
   */
  blameCut?: (cause: Error) => Promise<AppError>;
}

/**
 * Sends one invocation to a host and resolves with the function's response, streamed.
 * The wall-time limit covers the whole call: before the response starts it is a 504;
 * once streaming, the stream is cut. Either way `onTimeout` stops the runaway function.
 * A status outside 200-599 or oversized headers are the function's fault (FUNCTION_ERROR);
 * a 1xx is never relayed.
 */
export function sendToHost(target: HostTarget, fn: RuntimeFunction, req: InvokeRequest, opts: SendOptions): Promise<InvokeResponse> {
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
        if (status < 200 || status > 599) {
          clearTimeout(timer);
          settle(functionFault(`The function returned status ${status}; a function must answer with a status from 200 to 599.`, opts.log));
          // The connection is in no state to carry another call.
          return c.abort(new Error(`status ${status}`));
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
        if (timedOut) return void stream?.destroy(timeoutError(opts.timeoutMs));
        // The client went away and its side closed the stream: nothing is left to tell.
        if (stream?.destroyed) return;
        if (bodyCut(req)) {
          const cut = new AppError('MALFORMED_REQUEST', { message: 'The request body ended before it was complete.' });
          settle(cut);
          return void stream?.destroy(cut);
        }
        if ((err as { code?: string }).code === 'UND_ERR_HEADERS_OVERFLOW') {
          return settle(functionFault(`The function's response headers are larger than ${MAX_RESPONSE_HEADER_BYTES / 1024} KiB.`, opts.log));
        }
        if (!head) return settle(new HostUnreachable(err));
        // The host cut the response after its head: the function's body failed, or the host died.
        const blame = opts.blameCut?.(err) ?? Promise.resolve(new AppError('FUNCTION_RUNTIME_UNAVAILABLE', { message: 'The function runtime cut the response.' }));
        void blame.then((e) => {
          settle(e);
          stream?.destroy(e);
        });
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
): Promise<{ status: number; text: string; outcome: string | null }> {
  try {
    const res = await target.dispatcher.request({
      method: o.method,
      path: `${target.pathPrefix ?? ''}${o.path}`,
      headers: { ...target.extraHeaders, ...(o.json === undefined ? {} : { 'content-type': 'application/json' }) },
      body: o.json === undefined ? null : JSON.stringify(o.json),
      headersTimeout: o.timeoutMs,
      bodyTimeout: o.timeoutMs,
    });
    const outcome = res.headers['x-plinth-runtime-outcome'];
    return { status: res.statusCode, text: await res.body.text(), outcome: outcome === undefined ? null : String(outcome) };
  } catch (err) {
    throw new HostUnreachable(err);
  }
}

/** Resolves when a host (or a remote runtime) answers its health path with 200. */
export async function checkHost(target: HostTarget, timeoutMs: number): Promise<void> {
  const { status } = await hostCall(target, { method: 'GET', path: '/_plinth/health', timeoutMs });
  if (status !== 200) throw new HostUnreachable(new Error(`health answered ${status}`));
}

/**
 * A loaded version (`socket` is where a local host's worker takes its calls), or a module
 * that failed to load: `export` when its default export is not a function (the message says
 * what it is), `threw` otherwise (the host logged why).
 */
export type DeployResult = { loaded: true; socket: string | null } | { loaded: false; kind: 'export' | 'threw'; message: string };

/** The answer to a module its host refused to load (the local pool and a remote runtime alike). */
export function loadRefused(r: { kind: 'export' | 'threw'; message: string }): AppError {
  if (r.kind === 'export') return new AppError('INVALID_FUNCTION_CODE', { message: r.message });
  return new AppError('FUNCTION_ERROR', { message: 'The function failed to load; its logs show why.' });
}

/**
 * Loads a function version into a host. Transport failures reject with HostUnreachable; a
 * remote runtime's timeout or memory outcome with its AppError.
 */
export async function deployTo(
  target: HostTarget,
  payload: { version: string; code: string; secrets: Record<string, string>; adopts?: string },
  timeoutMs: number,
): Promise<DeployResult> {
  const { status, text, outcome } = await hostCall(target, { method: 'PUT', path: '/_plinth/deploy', json: payload, timeoutMs });
  if (outcome) throw outcomeError(outcome, timeoutMs);
  let body: { socket?: unknown; kind?: unknown; message?: unknown } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    // no details
  }
  if (status === 422) {
    return { loaded: false, kind: body.kind === 'export' ? 'export' : 'threw', message: typeof body.message === 'string' ? body.message : 'The module failed to load.' };
  }
  if (status !== 200) throw new HostUnreachable(new Error(`deploy answered ${status}`));
  // A remote runtime's answer carries no socket.
  return { loaded: true, socket: typeof body.socket === 'string' ? body.socket : null };
}
