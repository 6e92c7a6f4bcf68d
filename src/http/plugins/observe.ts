import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { maskUrl, type LineTally, type LogRecord, type LogWriter, type TallySummary } from '../../logs/index.js';
import type { Metrics } from '../../metrics/index.js';
import type { Identity } from '../../auth/identity.js';

const size = (v: unknown): number => {
  const n = Number(Array.isArray(v) ? v[0] : v);
  return Number.isFinite(n) && n > 0 ? n : 0;
};

/** What a request's log line and metrics are built from: values taken when it was answered. */
export interface Answered {
  time: number;
  method: string;
  url: string;
  /** The route pattern; null when no route matched. */
  route: string | null;
  status: number;
  elapsedMs: number;
  identity: Identity;
  requestId: string;
  ip: string | undefined;
  bytesIn: unknown;
  bytesOut: unknown;
}

// Client addresses read before a request's body was streamed onward (keepClientAddress).
const kept = new WeakMap<object, string | undefined>();

/**
 * Reads the client's address now, for the request's api line: a route that streams the body
 * onward (a function call) can find `request.raw.socket` gone by the time onResponse reads it.
 */
export function keepClientAddress(request: FastifyRequest): void {
  kept.set(request.raw, request.ip);
}

/**
 * The values of a request's log line, taken in onResponse: reads only, no string built. `route`
 * and `elapsedMs` are read once by the hook (`routeOptions` builds an object at each read).
 */
function answered(request: FastifyRequest, reply: FastifyReply, route: string | null, elapsedMs: number): Answered {
  return {
    time: Date.now(),
    method: request.method,
    url: request.url,
    route,
    status: reply.statusCode,
    elapsedMs,
    identity: request.identity,
    requestId: request.id,
    ip: request.ip ?? kept.get(request.raw),
    bytesIn: request.headers['content-length'],
    bytesOut: reply.getHeader('content-length'),
  };
}

/**
 * One structured record per answered request (source api), built when the log's batch is
 * written, not on the request's path: onResponse only appends the values (issue #38;
 * docs/architecture.md). stdout keeps Fastify's own request lines.
 */
export function requestRecord(a: Answered): LogRecord {
  const path = maskUrl(a.url);
  const id = a.identity;
  return {
    time: a.time,
    source: 'api',
    level: a.status >= 500 ? 'error' : a.status >= 400 ? 'warn' : 'info',
    message: `${a.method} ${path.length > 4000 ? `${path.slice(0, 4000)}…` : path} ${a.status}`,
    fields: {
      method: a.method,
      route: a.route,
      path,
      status: a.status,
      durationMs: Math.round(a.elapsedMs * 100) / 100,
      caller: id.kind,
      userId: id.kind === 'user' ? id.userId : null,
      requestId: a.requestId,
      ip: a.ip,
      bytesIn: size(a.bytesIn),
      bytesOut: size(a.bytesOut),
    },
  };
}

/** The log store as the request path sees it: a line appended, built when its batch is written. */
export type RequestLogs = LogWriter & {
  readonly enabled?: boolean;
  defer?: (build: () => LogRecord) => void;
  tally?: (describe: (s: TallySummary) => LogRecord) => LineTally;
};

/**
 * The `api` line of a minute's counted answers of one route (the front lane's health probes,
 * docs/logs.md): the fields of a request's line that apply to many, `durationMs` their median
 * (so /api/logs/stats reads it as it reads any line), and what only a count has.
 */
export function countedRecord(method: string, route: string, status: number): (s: TallySummary) => LogRecord {
  return (s) => ({
    time: s.to,
    source: 'api',
    level: 'info',
    message: `${method} ${route} ${status}: ${s.count} probes answered (one line a minute)`,
    fields: {
      method,
      route,
      path: route,
      status,
      count: s.count,
      durationMs: s.p50Ms,
      p99Ms: s.p99Ms,
      maxMs: s.maxMs,
      from: new Date(s.from).toISOString(),
      to: new Date(s.to).toISOString(),
      caller: 'none',
      lastRequestId: s.lastRequestId,
      ips: s.ips,
    },
  });
}

/**
 * Records one answer that is counted, not logged a line each (`countedRecord`): the tally's count
 * (with the store off, LOGS_STORE=false, none) and the same metrics as `recordAnswer`.
 */
export function recordCounted(
  logs: RequestLogs,
  metrics: Metrics,
  tally: LineTally,
  a: { method: string; route: string; status: number; elapsedMs: number; requestId: string; ip: string | undefined },
): void {
  if (logs.enabled !== false) tally.add(Date.now(), a.elapsedMs, a.requestId, a.ip);
  metrics.observeRequest(a.method, a.route, a.status, a.elapsedMs / 1000);
}

/**
 * Records one answered request: its log line (source api; with the store off, LOGS_STORE=false,
 * none is built) and its metrics. Fastify's onResponse hook and the front lane (http/front-lane.ts)
 * both call it, so a request is recorded the same whichever answered it.
 */
export function recordAnswer(logs: RequestLogs, metrics: Metrics, a: Answered): void {
  if (logs.enabled !== false) {
    if (logs.defer) logs.defer(() => requestRecord(a));
    else {
      const r = requestRecord(a);
      logs.write('api', r.level, r.message, r.fields);
    }
  }
  const route = a.route ?? '(no route)';
  metrics.observeRequest(a.method, route, a.status, a.elapsedMs / 1000);
  if (route.startsWith('/api/storage/')) {
    metrics.countStorageBytes('in', size(a.bytesIn));
    metrics.countStorageBytes('out', size(a.bytesOut));
  }
}

export function registerObserve(app: FastifyInstance, logs: RequestLogs, metrics: Metrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    recordAnswer(logs, metrics, answered(request, reply, request.routeOptions.url ?? null, reply.elapsedTime));
    done();
  });
}
