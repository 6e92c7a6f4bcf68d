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

const NOBODY: Identity = Object.freeze({ kind: 'none' });
const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * The front lane: the HTTP server's first `request` listener, ahead of Fastify (as engine.io
 * takes `/socket.io/`). It answers a few hot routes itself, with everything Fastify's global
 * hooks add to an answer (request id, CORS, the request log line and metrics through the same
 * functions, Fastify's own request lines, the drain's count), and hands every other request
 * (another path or method, a query string, a missing Host, a drain under way) to the
 * listeners that were there before it, unchanged. It costs a hot route Fastify's per-request
 * work (request and reply objects, the hook chain, the router) — issue #38.
 */
export class FrontLane {
  private readonly routes = new Map<string, LaneRoute>();
  /** The tallies of the counted routes, by path and method. */
  private readonly tallies = new Map<string, { GET: LineTally; HEAD: LineTally }>();
  private readonly logger: FastifyBaseLogger & { isLevelEnabled?: (level: string) => boolean };

  constructor(
    private readonly parts: LaneParts,
    routes: readonly LaneRoute[],
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
    if (route === undefined || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
    const { drain, cors, trustProxy } = this.parts;
    // Fastify answers these with the envelope (app.ts firstChecks).
    if (drain.draining || trustProxy || (req.headers.host === undefined && req.httpVersionMinor === 1)) return false;
    const start = performance.now();
    drain.track(req, res);
    const id = requestIdOf(req);
    const ip = req.socket.remoteAddress;
    const log = this.logger.isLevelEnabled?.('info') ? this.logger.child({ reqId: id }) : null;
    log?.info({ req: { method: req.method, url: req.url, ip } }, 'incoming request');
    const body = route.body();
    const length = Buffer.byteLength(body);
    res.writeHead(200, {
      'x-request-id': id,
      ...cors.simple(req.headers.origin),
      'content-type': JSON_TYPE,
      'content-length': length,
    });
    // Node sends no body to a HEAD request; the headers are the GET's, as Fastify's.
    res.end(body);
    const elapsedMs = performance.now() - start;
    log?.info({ res: { statusCode: 200 }, responseTime: elapsedMs }, 'request completed');
    const tally = this.tallies.get(route.path)?.[req.method];
    if (tally) {
      recordCounted(this.parts.logs, this.parts.metrics, tally, {
        method: req.method,
        route: route.path,
        status: 200,
        elapsedMs,
        requestId: id,
        ip,
      });
      return true;
    }
    recordAnswer(this.parts.logs, this.parts.metrics, {
      time: Date.now(),
      method: req.method,
      url: route.path,
      route: route.path,
      status: 200,
      elapsedMs,
      identity: NOBODY,
      requestId: id,
      ip,
      bytesIn: req.headers['content-length'],
      bytesOut: length,
    });
    return true;
  }
}
