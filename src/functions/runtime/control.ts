import type { Pool } from 'undici';
import { HostUnreachable, outcomeError } from './faults.js';
import { hostPool, type HostTarget } from './transport.js';

// The host protocol's calls other than an invocation: health and deploy (on a local host's
// control socket, or a remote runtime's /fn/{functionId} paths).

/**
 * One request of the host protocol other than an invocation: its status and text. Transport
 * failures and timeouts reject with HostUnreachable.
 */
async function hostCall(
  target: HostTarget,
  call: { method: 'GET' | 'PUT'; path: string; json?: unknown; timeoutMs: number },
): Promise<{ status: number; text: string; outcome: string | null }> {
  try {
    const res = await target.dispatcher.request({
      method: call.method,
      path: `${target.pathPrefix ?? ''}${call.path}`,
      headers: { ...target.extraHeaders, ...(call.json === undefined ? {} : { 'content-type': 'application/json' }) },
      body: call.json === undefined ? null : JSON.stringify(call.json),
      headersTimeout: call.timeoutMs,
      bodyTimeout: call.timeoutMs,
    });
    const outcome = res.headers['x-plinth-runtime-outcome'];
    return {
      status: res.statusCode,
      text: await res.body.text(),
      outcome: outcome === undefined ? null : String(outcome),
    };
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
 * that failed to load: `export` when its entry (default export, `handler`, module.exports,
 * Deno.serve) is not a function (the message says what it is), `threw` otherwise (the host logged why).
 */
export type DeployResult =
  | { loaded: true; socket: string | null }
  | { loaded: false; kind: 'export' | 'threw'; message: string };

export interface DeployPayload {
  version: string;
  code: string;
  secrets: Record<string, string>;
  adopts?: string;
  plinthUrl?: string;
  /** The function's time limit, which bounds its EdgeRuntime.waitUntil work too (a local host). */
  timeoutMs?: number;
}

/**
 * Loads a function version into a host. Transport failures reject with HostUnreachable; a
 * remote runtime's timeout or memory outcome with its AppError.
 */
export async function deployTo(target: HostTarget, payload: DeployPayload, timeoutMs: number): Promise<DeployResult> {
  const { status, text, outcome } = await hostCall(target, {
    method: 'PUT',
    path: '/_plinth/deploy',
    json: payload,
    timeoutMs,
  });
  if (outcome) throw outcomeError(outcome, timeoutMs);
  let body: { socket?: unknown; kind?: unknown; message?: unknown } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    // no details
  }
  if (status === 422) {
    return {
      loaded: false,
      kind: body.kind === 'export' ? 'export' : 'threw',
      message: typeof body.message === 'string' ? body.message : 'The module failed to load.',
    };
  }
  if (status !== 200) throw new HostUnreachable(new Error(`deploy answered ${status}`));
  // A remote runtime's answer carries no socket.
  return { loaded: true, socket: typeof body.socket === 'string' ? body.socket : null };
}

/**
 * Loads a version into a local host: straight into its standby worker when the host said where
 * that one listens (Node → worker → Node, the worker telling the host afterwards), else through
 * the control socket (Node → host → worker → host → Node). `worker`: the connections to the
 * worker that took it straight (one already open, for the first call). A standby that does not
 * take it (gone, or loaded meanwhile: a call without x-plinth-runtime-url, answered 400) leaves
 * it to the control socket; a timeout does not (the load itself was too slow).
 */
export async function deployLocal(
  host: HostTarget & { takeStandby(): string | null },
  payload: DeployPayload,
  timeoutMs: number,
): Promise<{ result: DeployResult; worker: Pool | null }> {
  const standby = host.takeStandby();
  if (standby !== null) {
    const pool = hostPool({ socketPath: standby });
    try {
      const result = await deployTo({ dispatcher: pool, extraHeaders: DIRECT }, payload, timeoutMs);
      if (result.loaded) return { result: { loaded: true, socket: standby }, worker: pool };
      void pool.destroy().catch(() => {});
      return { result, worker: null };
    } catch (err) {
      void pool.destroy().catch(() => {});
      if (!(err instanceof HostUnreachable) || err.timedOut) throw err;
    }
  }
  return { result: await deployTo(host, payload, timeoutMs), worker: null };
}

/** Marks a deploy sent to a standby worker's own socket (deno-host.js). */
const DIRECT = { 'x-plinth-runtime-deploy': '1' };
