import type { FastifyRequest } from 'fastify';
import { AppError } from '../../../errors/index.js';
import { safeEqual } from '../../../lib/crypto.js';
import type { Deps } from '../../../deps.js';
import type { RoutePlugin } from '../../types.js';

/** The admin key (x-api-key or bearer), or METRICS_TOKEN as a bearer token; else 401. */
async function allowed(deps: Deps, request: FastifyRequest): Promise<void> {
  const bearer = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
  if (bearer && deps.config.metricsToken && safeEqual(bearer, deps.config.metricsToken)) return;
  const identity = await deps.identity.resolve(request.headers).catch(() => null);
  if (identity?.kind === 'admin') return;
  throw new AppError('METRICS_UNAUTHORIZED');
}

/** GET /metrics: Prometheus text format (docs/metrics.md). Not rate limited: scrapers poll it. */
export const metricsRoutes: RoutePlugin = async (app, { deps }) => {
  app.get(
    '/metrics',
    {
      config: { access: 'open', rateLimit: false },
      schema: {
        tags: ['metrics'],
        summary: 'Prometheus metrics (text exposition format); the admin key or METRICS_TOKEN as a bearer token',
        security: [{ bearer: [] }, { apiKey: [] }],
      },
    },
    async (request, reply) => {
      await allowed(deps, request);
      const { contentType, body } = await deps.metrics.scrape();
      reply.header('content-type', contentType).header('cache-control', 'no-store');
      return body;
    },
  );
};
