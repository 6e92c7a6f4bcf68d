import type { FastifyInstance } from 'fastify';

/** Response headers a browser app may read (DESIGN.md). */
const EXPOSED_HEADERS =
  'X-Total-Count, Content-Range, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-Request-Id, Retry-After, Mcp-Session-Id';
const METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';
const MAX_AGE = '600';

/**
 * CORS as DESIGN.md decides: every origin by default (the request's origin is echoed, no
 * credentials), or only the origins of CORS_ORIGINS (then with credentials). Preflights are
 * answered here, before identity and rate limits, on any path. One onRequest hook doing only
 * this: @fastify/cors cost ~17% of a health check's CPU.
 */
export function registerCors(app: FastifyInstance, origins: readonly string[] | null): void {
  const allowed = origins ? new Set(origins) : null;
  app.addHook('onRequest', (request, reply, done) => {
    // The answer depends on the Origin header: caches must keep them apart.
    reply.header('vary', 'Origin');
    const origin = request.headers.origin;
    const preflight = request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined;
    if (origin === undefined || (allowed !== null && !allowed.has(origin))) {
      // No CORS headers: the browser refuses the response to a page of another origin.
      if (preflight) return reply.status(204).send();
      return done();
    }
    reply.header('access-control-allow-origin', origin);
    if (allowed !== null) reply.header('access-control-allow-credentials', 'true');
    if (preflight) {
      const asked = request.headers['access-control-request-headers'];
      reply.header('access-control-allow-methods', METHODS).header('access-control-max-age', MAX_AGE);
      if (asked) reply.header('access-control-allow-headers', asked);
      return reply.status(204).send();
    }
    reply.header('access-control-expose-headers', EXPOSED_HEADERS);
    done();
  });
  // OPTIONS without preflight headers still finds a route (and an empty 204).
  app.options('*', { config: { access: 'open', rateLimit: false }, schema: { hide: true } }, (_request, reply) =>
    reply.status(204).send(),
  );
}
