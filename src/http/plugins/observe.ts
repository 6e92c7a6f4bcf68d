import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { maskUrl, type LogLevel, type LogWriter } from '../../logs/index.js';
import type { Metrics } from '../../metrics/index.js';

const size = (v: unknown): number => {
  const n = Number(Array.isArray(v) ? v[0] : v);
  return Number.isFinite(n) && n > 0 ? n : 0;
};

/**
 * One structured record per answered request, built once in onResponse (after the answer is
 * sent, off the request's own time): to the log store (source api) and the metrics. Writing
 * only appends to the log's in-memory batch; stdout keeps Fastify's own request lines.
 */
export function requestRecord(request: FastifyRequest, reply: FastifyReply): { level: LogLevel; message: string; fields: Record<string, unknown> } {
  const status = reply.statusCode;
  const path = maskUrl(request.url);
  const id = request.identity;
  const fields = {
    method: request.method,
    route: request.routeOptions.url ?? null,
    path,
    status,
    durationMs: Math.round(reply.elapsedTime * 100) / 100,
    caller: id.kind,
    userId: id.kind === 'user' ? id.userId : null,
    requestId: request.id,
    ip: request.ip,
    bytesIn: size(request.headers['content-length']),
    bytesOut: size(reply.getHeader('content-length')),
  };
  return { level: status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info', message: `${request.method} ${path} ${status}`, fields };
}

export function registerObserve(app: FastifyInstance, logs: LogWriter & { readonly enabled?: boolean }, metrics: Metrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    // With the store off (LOGS_STORE=false) no line is built at all.
    if (logs.enabled !== false) {
      const r = requestRecord(request, reply);
      logs.write('api', r.level, r.message, r.fields);
    }
    const route = request.routeOptions.url ?? '(no route)';
    metrics.observeRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    if (route.startsWith('/api/storage/')) {
      metrics.countStorageBytes('in', size(request.headers['content-length']));
      metrics.countStorageBytes('out', size(reply.getHeader('content-length')));
    }
    done();
  });
}
