import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { maskUrl, type LogRecord, type LogWriter } from '../../logs/index.js';
import type { Metrics } from '../../metrics/index.js';

const size = (v: unknown): number => {
  const n = Number(Array.isArray(v) ? v[0] : v);
  return Number.isFinite(n) && n > 0 ? n : 0;
};

/** What a request's log line is built from: values taken when it was answered. */
interface Answered {
  time: number;
  method: string;
  url: string;
  route: string | null;
  status: number;
  elapsedMs: number;
  identity: FastifyRequest['identity'];
  requestId: string;
  ip: string;
  bytesIn: unknown;
  bytesOut: unknown;
}

/**
 * The values of a request's log line, taken in onResponse: reads only, no string built. `route`
 * and `elapsedMs` are read once by the hook (`routeOptions` builds an object at each read).
 */
export function answered(
  request: FastifyRequest,
  reply: FastifyReply,
  route: string | null,
  elapsedMs: number,
): Answered {
  return {
    time: Date.now(),
    method: request.method,
    url: request.url,
    route,
    status: reply.statusCode,
    elapsedMs,
    identity: request.identity,
    requestId: request.id,
    ip: request.ip,
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

export function registerObserve(
  app: FastifyInstance,
  logs: LogWriter & { readonly enabled?: boolean; defer?: (build: () => LogRecord) => void },
  metrics: Metrics,
): void {
  app.addHook('onResponse', (request, reply, done) => {
    const pattern = request.routeOptions.url ?? null;
    const elapsedMs = reply.elapsedTime;
    // With the store off (LOGS_STORE=false) no line is built at all.
    if (logs.enabled !== false) {
      const a = answered(request, reply, pattern, elapsedMs);
      if (logs.defer) logs.defer(() => requestRecord(a));
      else {
        const r = requestRecord(a);
        logs.write('api', r.level, r.message, r.fields);
      }
    }
    const route = pattern ?? '(no route)';
    metrics.observeRequest(request.method, route, reply.statusCode, elapsedMs / 1000);
    if (route.startsWith('/api/storage/')) {
      metrics.countStorageBytes('in', size(request.headers['content-length']));
      metrics.countStorageBytes('out', size(reply.getHeader('content-length')));
    }
    done();
  });
}
