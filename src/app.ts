import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import { AppError } from './errors/index.js';
import Fastify, { type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Deps } from './deps.js';
import type { RoutePlugin } from './http/types.js';
import { frameworkErrorHandler, registerErrorHandling } from './http/plugins/errors.js';
import { CorsPolicy, registerCors } from './http/plugins/cors.js';
import { FrontLane } from './http/front-lane.js';
import { laneHandlers } from './http/lanes/index.js';
import { registerIdentity } from './http/plugins/identity.js';
import { createRateLimiter, registerRateLimit } from './http/plugins/rate-limit.js';
import { requestLogger } from './http/request-logger.js';
import { requestIdOf } from './http/request-id.js';
import { registerObserve } from './http/plugins/observe.js';
import { maskUrl } from './logs/index.js';
import { logRoutes } from './http/routes/logs/index.js';
import { metricsRoutes } from './http/routes/metrics/index.js';
import { jsonBodyParser } from './http/json-body.js';
import { healthLane, healthRoutes } from './http/routes/health/index.js';
import { storageRoutes } from './http/routes/storage/index.js';
import { aiRoutes } from './http/routes/ai/index.js';
import { authRoutes } from './http/routes/auth/index.js';
import { oauthRoutes } from './http/routes/auth/oauth.js';
import { tableRoutes } from './http/routes/database/tables.js';
import { recordRoutes } from './http/routes/database/records.js';
import { rpcRoutes } from './http/routes/database/rpc.js';
import { functionRoutes } from './http/routes/functions/index.js';
import { keyRoutes } from './http/routes/keys/index.js';
import { adminRoutes } from './http/routes/admin/index.js';
import { dashboardRoutes } from './http/routes/dashboard/index.js';
import { realtimeTableRoutes } from './http/routes/database/realtime.js';
import { scheduleRoutes } from './http/routes/schedules/index.js';
import { webhookRoutes } from './http/routes/webhooks/index.js';
import { emailRoutes } from './http/routes/email/index.js';
import { migrationRoutes } from './http/routes/database/migrations.js';
import { metadataRoutes } from './http/routes/metadata/index.js';
import { advisorRoutes } from './http/routes/advisor/index.js';
import { attachRealtime } from './http/realtime/server.js';
import { schemaCompilers } from './http/compilers.js';
import { Drain } from './http/drain.js';
import { advanceRoutes } from './http/routes/database/advance.js';
import { typesRoutes } from './http/routes/database/types.js';
import { mcpRoutes } from './http/routes/mcp/index.js';
import { docsRoutes } from './http/routes/mcp/docs.js';

/** Every route module, in registration order. */
const ROUTES: RoutePlugin[] = [
  healthRoutes,
  authRoutes,
  oauthRoutes,
  aiRoutes,
  tableRoutes,
  realtimeTableRoutes,
  migrationRoutes,
  recordRoutes,
  rpcRoutes,
  storageRoutes,
  functionRoutes,
  metadataRoutes,
  advisorRoutes,
  keyRoutes,
  adminRoutes,
  logRoutes,
  metricsRoutes,
  advanceRoutes,
  typesRoutes,
  mcpRoutes,
  docsRoutes,
  dashboardRoutes,
  scheduleRoutes,
  webhookRoutes,
  emailRoutes,
];

/**
 * A plugin with its name given, as Fastify reads it: without one, Fastify looks for the plugin
 * among the exports of every CommonJS module loaded, once per plugin (≈ 0.1 s of a loaded start).
 */
function named(plugin: RoutePlugin): RoutePlugin {
  const display = Symbol.for('fastify.display-name');
  (plugin as unknown as Record<symbol, string>)[display] ??= plugin.name;
  return plugin;
}

/** Node's answer to an Expect header other than 100-continue, with the envelope. */
function answerExpectationFailed(_req: IncomingMessage, res: ServerResponse): void {
  const e = new AppError('EXPECTATION_FAILED');
  const body = JSON.stringify(e.toBody());
  res.writeHead(e.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  });
  res.end(body);
}

/** The answer to a request that arrives on an open connection while the server shuts down. */
const DRAINING = {
  message: 'The server is shutting down.',
  nextActions:
    'Send the request again after the seconds in Retry-After, on a new connection: another instance, or this one restarted, will answer.',
  headers: { 'retry-after': '5', connection: 'close' },
};

/**
 * Once closing starts (SIGTERM), a request arriving on an open connection gets the envelope
 * (with Connection: close); idle keep-alive connections are closed only after `graceMs` of
 * idleness (http/drain.ts), so that no request sent on one is cut by a reset.
 */
function answerWhileDraining(app: FastifyInstance, graceMs: number): Drain {
  const drain = new Drain(app.server);
  app.addHook('preClose', (done) => {
    drain.start(graceMs).then(() => done(), done);
  });
  return drain;
}

/**
 * The first hook of every request, one rather than one per check (each hook is a step of
 * Fastify's chain on every request, issue #38): the request id goes back as a header, an
 * HTTP/1.1 request without Host is malformed, and while draining the answer is the envelope.
 */
function firstChecks(app: FastifyInstance, drain: Drain): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    if (request.headers.host === undefined && request.raw.httpVersionMinor === 1) {
      return done(new AppError('MALFORMED_REQUEST', { message: 'An HTTP/1.1 request needs a Host header.' }));
    }
    done(drain.draining ? new AppError('SERVICE_UNAVAILABLE', DRAINING) : undefined);
  });
}

export interface AppOptions {
  /** Where log lines go (default stdout); false turns logging off. */
  logStream?: NodeJS.WritableStream | { write(line: string): unknown } | false;
  /**
   * While closing, how long a keep-alive connection must have been idle before it is closed
   * (main.ts: 1 s, so that a client's next request on it is answered, not reset); default 100 ms
   * (a request already sent behind the last answer is still read and answered).
   */
  drainGraceMs?: number;
  /** Compile every route's schemas as it is added (a test does, so none can fail first at a request); default on first use. */
  compileSchemasEagerly?: boolean;
  /** Hot routes answered ahead of Fastify (http/front-lane.ts); default on. A test turns it off to compare answers. */
  frontLane?: boolean;
}

/** Builds the Fastify app from its dependencies. Reads no env and never listens. */
export async function buildApp(deps: Deps, opts: AppOptions = {}): Promise<FastifyInstance> {
  const { config } = deps;
  const app = Fastify({
    logger: opts.logStream !== false && {
      level: config.logLevel,
      serializers: {
        req: (req) => ({ method: req.method, url: maskUrl(String(req.url)), ip: req.ip }),
      },
      ...(opts.logStream ? { stream: opts.logStream } : {}),
    },
    childLoggerFactory: requestLogger,
    bodyLimit: config.bodyLimitBytes,
    // Node would answer a missing Host with an empty 400; the request-id hook answers it with the envelope.
    http: { requireHostHeader: false },
    trustProxy: config.trustProxy,
    genReqId: requestIdOf,
    frameworkErrors: frameworkErrorHandler,
    // Requests Node cannot even parse still get the envelope.
    clientErrorHandler: (err, socket) => {
      const e = new AppError(
        (err as { code?: string }).code === 'HPE_HEADER_OVERFLOW' ? 'HEADERS_TOO_LARGE' : 'MALFORMED_REQUEST',
      );
      const body = JSON.stringify(e.toBody());
      if (!socket.writable) return socket.destroy();
      socket.end(
        `HTTP/1.1 ${e.status} ${STATUS_CODES[e.status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 2048 },
    // While draining, requests still arriving on open connections get the envelope (below), not
    // Fastify's own 503 body.
    return503OnClosing: false,
    // Query strings, params and headers arrive as text and are coerced to their schema types;
    // JSON bodies are not: a 42 where a string belongs is a 400, not "42". Each schema is
    // compiled on its route's first request, not at start (http/compilers.ts).
    schemaController: { compilersFactory: schemaCompilers(opts.compileSchemasEagerly === true) as never },
  }).withTypeProvider<TypeBoxTypeProvider>();

  registerErrorHandling(app);
  // JSON is the only body type the API parses (routes that take raw bodies add their own parser):
  // text/plain is answered 415, not read as a string that then fails the body schema.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, jsonBodyParser);
  app.server.on('checkExpectation', answerExpectationFailed);
  const drain = answerWhileDraining(app, opts.drainGraceMs ?? 100);
  firstChecks(app, drain);
  const cors = new CorsPolicy(config.corsOrigins);
  registerCors(app, cors);
  registerObserve(app, deps.logs, deps.metrics);
  registerIdentity(app, deps.identity);
  const limiter = createRateLimiter(config.rateLimit, deps.redis);
  registerRateLimit(app, limiter);
  await registerOpenApi(app, deps.version);
  app.get('/api/openapi.json', { config: { access: 'open' }, schema: { hide: true } }, async () => app.swagger());
  for (const routes of ROUTES) await app.register(named(routes), { deps });
  // Socket.IO at /socket.io/ on the same HTTP server (docs/realtime.md).
  await attachRealtime(app, deps);
  drain.leaveUpgrades();
  if (opts.frontLane !== false) {
    const parts = { drain, cors, logs: deps.logs, metrics: deps.metrics, log: app.log, trustProxy: config.trustProxy };
    new FrontLane(parts, [healthLane(deps.version)], laneHandlers(deps, limiter)).install(app.server);
  }
  return app;
}

/** The OpenAPI document every route's schema feeds (`GET /api/openapi.json`, docs/api.md). */
async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Plinth API', version, description: 'Self-hostable backend platform.' },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer' },
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
          anonKey: { type: 'apiKey', in: 'header', name: 'apikey' },
        },
      },
    },
  });
}
