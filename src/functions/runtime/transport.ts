import type { IncomingHttpHeaders } from 'node:http';
import { Pool, type Dispatcher } from 'undici';

/** Where a host is reached: a connection pool to it, and how its protocol paths are written. */
export interface HostTarget {
  dispatcher: Dispatcher;
  /** Prepended to the host protocol paths (a remote runtime routes by function). */
  pathPrefix?: string;
  extraHeaders?: Record<string, string>;
}

/** Most bytes of response header (names and values) a function may answer with. */
export const MAX_RESPONSE_HEADER_BYTES = 16 * 1024;

/**
 * Keep-alive connections to a host: a local host's Unix socket, or a remote runtime's origin
 * (http or https). undici rather than node:http's client: it costs the API server about
 * half the CPU per relayed call (docs/decisions.md).
 */
export function hostPool(where: { socketPath: string } | { origin: string }, connections = 256): Pool {
  // Set rather than taken from Node's --max-http-header-size, so the limit in the docs holds.
  const opts = { connections, maxHeaderSize: MAX_RESPONSE_HEADER_BYTES };
  return 'socketPath' in where
    ? new Pool('http://localhost', { socketPath: where.socketPath, ...opts })
    : new Pool(where.origin, opts);
}

/**
 * Opens a connection to a worker just loaded, while the save that loaded it writes its row: a
 * call without x-plinth-runtime-url, answered 400 with no function run (deno-host.js), leaves
 * the connection open in the pool for the first call. Returns the pool.
 */
export function preconnect(dispatcher: Pool): Pool {
  dispatcher
    .request({ method: 'GET', path: '/' })
    .then((res) => res.body.dump())
    .catch(() => {});
  return dispatcher;
}

// Hop-by-hop headers belong to one connection and are never forwarded (RFC 9110 §7.6.1).
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'proxy-connection',
  'upgrade',
  'te',
  'trailer',
  'http2-settings',
]);

/**
 * The end-to-end headers of `headers` (lower-case names, as Node and undici give them), with
 * `extra` set over them. One pass, no entry arrays: it runs twice on every relayed call.
 */
export function dropHopByHop(
  headers: IncomingHttpHeaders,
  extra?: Readonly<Record<string, string>>,
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const k in headers) {
    const v = headers[k];
    if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  }
  if (extra) for (const k in extra) out[k] = extra[k]!;
  return out;
}
