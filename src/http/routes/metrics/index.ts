import type { FastifyRequest } from 'fastify';
import { Type } from '@fastify/type-provider-typebox';
import { HISTORY_RANGES, type HistoryRange } from '../../../metrics/history.js';
import { AppError } from '../../../errors/index.js';
import { safeEqual } from '../../../lib/crypto.js';
import type { Deps } from '../../../deps.js';
import type { RoutePlugin } from '../../types.js';

/** The admin key (x-api-key or bearer), or METRICS_TOKEN as a bearer token; else 401. */
async function allowed(deps: Pick<Deps, 'config' | 'identity'>, request: FastifyRequest): Promise<void> {
  const bearer = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
  if (bearer && deps.config.metricsToken && safeEqual(bearer, deps.config.metricsToken)) return;
  const identity = await deps.identity.resolve(request.headers).catch(() => null);
  if (identity?.kind === 'admin') return;
  throw new AppError('METRICS_UNAUTHORIZED');
}

const Sample = Type.Object({
  at: Type.String({ description: 'The end of the interval the sample stands for (ISO 8601)' }),
  databaseBytes: Type.Number({ description: 'pg_database_size when sampled' }),
  storageBytes: Type.Number({ description: 'The sizes of all stored objects added up, when sampled' }),
  functionCalls: Type.Union([Type.Number(), Type.Null()], {
    description: 'Function invocations since the previous point; null while LOGS_STORE was off',
  }),
  functionErrors: Type.Union([Type.Number(), Type.Null()], { description: 'Those that failed (a 5xx or a fault)' }),
  aiTokens: Type.Number({ description: 'AI tokens used through the gateway since the previous point' }),
});

/**
 * GET /metrics: Prometheus text format (docs/metrics.md). Not rate limited: scrapers poll it.
 * GET /api/metrics/history: usage over time for the dashboard's overview, admin only.
 */
export const metricsRoutes: RoutePlugin<'config' | 'identity' | 'metrics' | 'usageHistory'> = async (app, { deps }) => {
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
  app.get(
    '/api/metrics/history',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['metrics'],
        summary: 'Usage over time: database and storage bytes, function calls and errors, AI tokens (oldest first)',
        security: [{ apiKey: [] }],
        querystring: Type.Object({
          range: Type.Optional(
            Type.Union(
              Object.keys(HISTORY_RANGES).map((r) => Type.Literal(r)),
              { default: '24h', description: 'How far back' },
            ),
          ),
        }),
        response: {
          200: Type.Object({
            samples: Type.Array(Sample),
            intervalSeconds: Type.Integer({
              description: 'One sample is taken per this many seconds (USAGE_SAMPLE_SECONDS)',
            }),
            stepSeconds: Type.Integer({
              description: 'The seconds each point stands for: longer ranges add neighbouring samples up',
            }),
          }),
        },
      },
    },
    async (request) => {
      const range = (request.query.range ?? '24h') as HistoryRange;
      const history = deps.usageHistory;
      return {
        samples: await history.read(range),
        intervalSeconds: history.opts.intervalSeconds,
        stepSeconds: history.stepSeconds(range),
      };
    },
  );
};
