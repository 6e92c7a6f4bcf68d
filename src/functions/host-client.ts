import http from 'node:http';
import https from 'node:https';
import { AppError } from '../errors/index.js';
import type { InvokeRequest, InvokeResponse, RuntimeFunction } from './runtime.js';

/** Where a host is reached: a Unix socket (local pool) or host:port (remote runtime). */
export interface HostTarget {
  agent: http.Agent;
  socketPath?: string;
  hostname?: string;
  port?: number;
  /** Prepended to the host protocol paths (a remote runtime routes by function). */
  pathPrefix?: string;
  extraHeaders?: Record<string, string>;
  /** https (a remote runtime behind TLS); `agent` is then an https.Agent. */
  secure?: boolean;
}

const requestFor = (t: HostTarget) => (t.secure ? https.request : http.request);

// Hop-by-hop headers belong to one connection and are never forwarded (RFC 9110 §7.6.1).
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'upgrade', 'te', 'trailer', 'http2-settings']);

export function dropHopByHop(headers: http.IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  return out;
}

const SMALL_BODY = 64 * 1024;

/** A request that failed before the function answered, with the transport's error code. */
export class HostUnreachable extends Error {
  constructor(override readonly cause: unknown) {
    super('function host unreachable');
  }
}

/** The host had another version loaded (it restarted): deploy again. */
export class NotDeployed extends Error {}

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
    let settled = false;
    let response: http.IncomingMessage | null = null;
    const timer = setTimeout(() => {
      opts.onTimeout();
      if (!settled) {
        settled = true;
        creq.destroy();
        reject(new AppError('FUNCTION_TIMEOUT', { message: `The function did not finish within ${opts.timeoutMs} ms.` }));
      } else response?.destroy(new Error('function timed out'));
    }, opts.timeoutMs);
    const headers: http.OutgoingHttpHeaders = {
      ...dropHopByHop(req.headers),
      ...target.extraHeaders,
      'x-plinth-runtime-version': fn.version,
      'x-plinth-runtime-url': req.url,
    };
    const creq = requestFor(target)({
      agent: target.agent,
      socketPath: target.socketPath,
      hostname: target.hostname,
      port: target.port,
      method: req.method,
      path: `${target.pathPrefix ?? ''}/_plinth/invoke`,
      headers,
    });
    creq.on('response', (res) => {
      response = res;
      const outcome = res.headers['x-plinth-runtime-outcome'];
      if (outcome) {
        res.resume();
        clearTimeout(timer);
        settled = true;
        if (outcome === 'threw' || outcome === 'load-error') reject(new AppError('FUNCTION_ERROR'));
        else if (outcome === 'timeout') reject(new AppError('FUNCTION_TIMEOUT', { message: `The function did not finish within ${opts.timeoutMs} ms.` }));
        else if (outcome === 'memory') reject(new AppError('FUNCTION_MEMORY_LIMIT'));
        else if (outcome === 'not-deployed') reject(new NotDeployed());
        else reject(new HostUnreachable(new Error(`host outcome ${String(outcome)}`)));
        return;
      }
      settled = true;
      res.on('close', () => clearTimeout(timer));
      const head = { status: res.statusCode ?? 502, headers: dropHopByHop(res.headers) };
      const length = Number(res.headers['content-length'] ?? NaN);
      if (!(length <= SMALL_BODY)) return resolve({ ...head, body: res });
      // A small body of known length is read whole: sending a Buffer costs the API server
      // less than piping a stream.
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ ...head, body: Buffer.concat(chunks) }));
      res.on('error', (err) => reject(new HostUnreachable(err)));
    });
    creq.on('error', (err) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new HostUnreachable(err));
    });
    if (req.body) {
      req.body.on('error', (err) => creq.destroy(err));
      req.body.pipe(creq);
    } else creq.end();
  });
}

/** A loaded version: `socket` is where a local host's worker takes its calls. */
export type DeployResult = { loaded: true; socket: string | null } | { loaded: false };

/**
 * Loads a function version into a host; `loaded: false` when the module failed to load (the
 * host logged why). Transport failures reject with HostUnreachable.
 */
export function deployTo(
  target: HostTarget,
  payload: { version: string; code: string; secrets: Record<string, string> },
  timeoutMs: number,
): Promise<DeployResult> {
  const body = JSON.stringify(payload);
  return new Promise((resolve, reject) => {
    const req = requestFor(target)(
      {
        agent: target.agent,
        socketPath: target.socketPath,
        hostname: target.hostname,
        port: target.port,
        method: 'PUT',
        path: `${target.pathPrefix ?? ''}/_plinth/deploy`,
        headers: { ...target.extraHeaders, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        timeout: timeoutMs,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          if (text.length < 4096) text += c;
        });
        res.on('end', () => {
          if (res.statusCode === 422) return resolve({ loaded: false });
          if (res.statusCode !== 200) return reject(new HostUnreachable(new Error(`deploy answered ${res.statusCode}`)));
          let socket: unknown = null;
          try {
            socket = (JSON.parse(text) as { socket?: unknown }).socket ?? null;
          } catch {
            // a remote runtime's answer carries no socket
          }
          resolve({ loaded: true, socket: typeof socket === 'string' ? socket : null });
        });
        res.on('error', (err) => reject(new HostUnreachable(err)));
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error('deploy timed out'), { code: 'DEPLOY_TIMEOUT' })));
    req.on('error', (err) => reject(new HostUnreachable(err)));
    req.end(body);
  });
}
