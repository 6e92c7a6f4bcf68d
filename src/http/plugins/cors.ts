import type { FastifyInstance } from 'fastify';

/** Response headers a browser app may read (DESIGN.md). */
const EXPOSED_HEADERS =
  'X-Total-Count, Content-Range, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-Request-Id, Retry-After, Mcp-Session-Id';
const METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';
const MAX_AGE = '600';

/** The CORS headers of an answer that is not a preflight's. */
export type CorsHeaders = Readonly<Record<string, string>>;

/** The headers of an answer to no origin, or to one not allowed: only Vary. */
const NO_CORS: CorsHeaders = Object.freeze({ vary: 'Origin' });

/**
 * CORS as DESIGN.md decides: every origin by default (the request's origin is echoed, no
 * credentials), or only the origins of CORS_ORIGINS (then with credentials). `simple` gives the
 * headers of an answer that is not a preflight; Fastify's hook (registerCors) and the front lane
 * (http/front-lane.ts) both take them from here.
 */
export class CorsPolicy {
  private readonly allowed: ReadonlySet<string> | null;

  constructor(origins: readonly string[] | null) {
    this.allowed = origins ? new Set(origins) : null;
  }

  /** Whether a request from `origin` gets CORS headers (none for a missing or refused origin). */
  allows(origin: string | undefined): origin is string {
    return origin !== undefined && (this.allowed === null || this.allowed.has(origin));
  }

  /** The headers of a non-preflight answer: Vary always (caches must keep origins apart), the rest for an allowed origin. */
  simple(origin: string | undefined): CorsHeaders {
    if (!this.allows(origin)) return NO_CORS;
    return this.allowed === null
      ? { vary: 'Origin', 'access-control-allow-origin': origin, 'access-control-expose-headers': EXPOSED_HEADERS }
      : {
          vary: 'Origin',
          'access-control-allow-origin': origin,
          'access-control-allow-credentials': 'true',
          'access-control-expose-headers': EXPOSED_HEADERS,
        };
  }

  /** The headers of a preflight's 204. */
  preflight(origin: string | undefined, asked: string | undefined): CorsHeaders {
    if (!this.allows(origin)) return NO_CORS;
    return {
      vary: 'Origin',
      'access-control-allow-origin': origin,
      ...(this.allowed !== null ? { 'access-control-allow-credentials': 'true' } : {}),
      'access-control-allow-methods': METHODS,
      'access-control-max-age': MAX_AGE,
      ...(asked ? { 'access-control-allow-headers': asked } : {}),
    };
  }
}

/**
 * CORS on every request: preflights are answered here, before identity and rate limits, on any
 * path. One onRequest hook doing only this: @fastify/cors cost ~17% of a health check's CPU.
 */
export function registerCors(app: FastifyInstance, policy: CorsPolicy): void {
  app.addHook('onRequest', (request, reply, done) => {
    const origin = request.headers.origin;
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) {
      // No CORS headers for a refused origin: the browser refuses the response to a page of another origin.
      return reply
        .status(204)
        .headers(policy.preflight(origin, request.headers['access-control-request-headers']))
        .send();
    }
    reply.headers(policy.simple(origin));
    done();
  });
  // OPTIONS without preflight headers still finds a route (and an empty 204).
  app.options('*', { config: { access: 'open', rateLimit: false }, schema: { hide: true } }, (_request, reply) =>
    reply.status(204).send(),
  );
}
