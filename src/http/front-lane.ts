import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import type { Identity } from '../auth/identity.js';
import type { Metrics } from '../metrics/index.js';
import type { CorsPolicy } from './plugins/cors.js';
import type { LineTally } from '../logs/index.js';
import { countedRecord, recordAnswer, recordCounted, type RequestLogs } from './plugins/observe.js';
import type { Drain } from './drain.js';
import { requestIdOf } from './request-id.js';
import { JSON_TYPE, NOBODY } from './lanes/shared.js';

/**
 * A route the front lane answers itself: an exact path (no query string, no trailing slash), its
 * methods (a GET route also answers HEAD, as Fastify's exposed HEAD routes do) and a synchronous
 * JSON answer. Only routes whose Fastify route is `access: 'open'` and `rateLimit: false`, with
 * no hook of their own, may be here: the lane runs none of those (docs/architecture.md).
 */
export interface LaneRoute {
  /** The path, which is also the route pattern of the metrics and the log line. */
  path: string;
  /** The JSON text of the 200 answer, made per request. */
  body(): string;
  /** Its answers are counted into one `api` line a minute, not stored a line each (health probes; docs/logs.md). */
  counted?: boolean;
}

/** What a lane answer shares with Fastify's: the app's parts the global hooks use. */
export interface LaneParts {
  drain: Drain;
  cors: CorsPolicy;
  logs: RequestLogs;
  metrics: Metrics;
  /** The app's logger: Fastify's request lines ("incoming request", "request completed") at info. */
  log: FastifyBaseLogger;
  /** With TRUST_PROXY the client's address is Fastify's to work out (proxy-addr): the lane leaves such requests to it. */
  trustProxy: boolean;
}

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** A request the lane has taken: what its answer's bookkeeping is made from (`LaneKit`). */
export interface LaneCall {
  start: number;
  id: string;
  ip: string | undefined;
  /** Fastify's request logger (reqId bound) when `info` is on, else null. */
  log: FastifyBaseLogger | null;
}

/**
 * A lane route that is not an exact path with a fixed answer: it looks at the request and, when
 * it is its own, answers it (synchronously or later) and returns true; false leaves it to the
 * next handler and then Fastify, with nothing written. It must answer every request it takes
 * with what Fastify would have answered, bookkeeping included (`LaneKit`).
 */
export interface LaneHandler {
  answer(req: IncomingMessage, res: ServerResponse, kit: LaneKit): boolean;
}

/** What a lane handler shares with the lane: the request's bookkeeping, as Fastify's global hooks do it. */
export interface LaneKit {
  readonly parts: LaneParts;
  /** Whether the lane may answer at all: not while draining, nor with TRUST_PROXY, nor an HTTP/1.1 request without Host. */
  open(req: IncomingMessage): boolean;
  /** Takes the request: the drain's count, its request id, Fastify's "incoming request" line. */
  begin(req: IncomingMessage, res: ServerResponse): LaneCall;
  /** The answer is sent: Fastify's "request completed" line, the `api` log line and the metrics. */
  finish(
    req: IncomingMessage,
    call: LaneCall,
    a: { route: string; status: number; identity?: Identity; bytesOut: unknown },
  ): void;
}

/**
 * The front lane: the HTTP server's first `request` listener, ahead of Fastify (as engine.io
 * takes `/socket.io/`). It answers a few hot routes itself, with everything Fastify's global
 * hooks add to an answer (request id, CORS, the request log line and metrics through the same
 * functions, Fastify's own request lines, the drain's count), and hands every other request
 * (another path or method, a query string, a missing Host, a drain under way) to the
 * listeners that were there before it, unchanged. It costs a hot route Fastify's per-request
 * work (request and reply objects, the hook chain, the router) — issue #38. Exact routes with
 * a fixed answer are `LaneRoute`s; others are `LaneHandler`s, tried in order after them.
 */
export class FrontLane implements LaneKit {
  private readonly routes = new Map<string, LaneRoute>();
  /** The tallies of the counted routes, by path and method. */
  private readonly tallies = new Map<string, { GET: LineTally; HEAD: LineTally }>();
  private readonly logger: FastifyBaseLogger & { isLevelEnabled?: (level: string) => boolean };

  constructor(
    readonly parts: LaneParts,
    routes: readonly LaneRoute[],
    private readonly handlers: readonly LaneHandler[] = [],
  ) {
    for (const r of routes) {
      this.routes.set(r.path, r);
      const tally = parts.logs.tally;
      if (r.counted && tally) {
        const of = (method: string) => tally.call(parts.logs, countedRecord(method, r.path, 200));
        this.tallies.set(r.path, { GET: of('GET'), HEAD: of('HEAD') });
      }
    }
    this.logger = parts.log;
  }

  /** Puts the lane ahead of the server's `request` listeners, which get every request it does not answer. */
  install(server: Server): void {
    const rest = server.listeners('request') as Listener[];
    server.removeAllListeners('request');
    const lane = this;
    server.on('request', function (this: Server, req: IncomingMessage, res: ServerResponse) {
      if (lane.answer(req, res)) return;
      for (const listener of rest) listener.call(this, req, res);
    });
  }

  /** Answers the request when it is the lane's; false (nothing written) when it is Fastify's. */
  answer(req: IncomingMessage, res: ServerResponse): boolean {
    const route = this.routes.get(req.url ?? '');
    if (route === undefined) {
      for (const h of this.handlers) if (h.answer(req, res, this)) return true;
      return false;
    }
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !this.open(req)) return false;
    const call = this.begin(req, res);
    const body = route.body();
    const length = Buffer.byteLength(body);
    res.writeHead(200, {
      'x-request-id': call.id,
      ...this.parts.cors.simple(req.headers.origin),
      'content-type': JSON_TYPE,
      'content-length': length,
    });
    // Node sends no body to a HEAD request; the headers are the GET's, as Fastify's.
    res.end(body);
    const tally = this.tallies.get(route.path)?.[req.method];
    if (!tally) {
      this.finish(req, call, { route: route.path, status: 200, bytesOut: length });
      return true;
    }
    const elapsedMs = performance.now() - call.start;
    call.log?.info({ res: { statusCode: 200 }, responseTime: elapsedMs }, 'request completed');
    recordCounted(this.parts.logs, this.parts.metrics, tally, {
      method: req.method,
      route: route.path,
      status: 200,
      elapsedMs,
      requestId: call.id,
      ip: call.ip,
    });
    return true;
  }

  open(req: IncomingMessage): boolean {
    // Fastify answers these with the envelope (app.ts firstChecks).
    const { drain, trustProxy } = this.parts;
    return !(drain.draining || trustProxy || (req.headers.host === undefined && req.httpVersionMinor === 1));
  }

  begin(req: IncomingMessage, res: ServerResponse): LaneCall {
    const start = performance.now();
    this.parts.drain.track(req, res);
    const id = requestIdOf(req);
    const ip = req.socket.remoteAddress;
    const log = this.logger.isLevelEnabled?.('info') ? this.logger.child({ reqId: id }) : null;
    log?.info({ req: { method: req.method, url: req.url, ip } }, 'incoming request');
    return { start, id, ip, log };
  }

  finish(
    req: IncomingMessage,
    call: LaneCall,
    a: { route: string; status: number; identity?: Identity; bytesOut: unknown },
  ): void {
    const elapsedMs = performance.now() - call.start;
    call.log?.info({ res: { statusCode: a.status }, responseTime: elapsedMs }, 'request completed');
    recordAnswer(this.parts.logs, this.parts.metrics, {
      time: Date.now(),
      method: req.method ?? 'GET',
      url: req.url ?? '',
      route: a.route,
      status: a.status,
      elapsedMs,
      identity: a.identity ?? NOBODY,
      requestId: call.id,
      ip: call.ip,
      bytesIn: req.headers['content-length'],
      bytesOut: a.bytesOut,
    });
  }
}
