import { Type } from '@fastify/type-provider-typebox';
import { LEVELS } from '../../../logs/index.js';
import type { RoutePlugin } from '../../types.js';

const Level = Type.Union(
  LEVELS.map((l) => Type.Literal(l)),
  { description: 'The lowest level shown (warn: warn and error)' },
);
const Filters = {
  from: Type.Optional(Type.String({ maxLength: 64, description: 'ISO 8601 time: lines at or after it' })),
  to: Type.Optional(Type.String({ maxLength: 64, description: 'ISO 8601 time: lines at or before it' })),
  level: Type.Optional(Level),
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'Text the message or the fields contain (case-insensitive)',
    }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  cursor: Type.Optional(
    Type.String({ maxLength: 64, pattern: '^[A-Za-z0-9_-]+$', description: 'nextCursor of the previous page' }),
  ),
};
const Entry = Type.Object({
  id: Type.String(),
  timestamp: Type.String(),
  source: Type.String(),
  level: Type.String(),
  eventMessage: Type.String(),
  body: Type.Record(Type.String(), Type.Unknown()),
});
const Page = Type.Object({
  logs: Type.Array(Entry),
  total: Type.Integer(),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
});
const common = { tags: ['logs'], security: [{ apiKey: [] }] };

/** The log store, admin only: sources, one source's lines, a search over all, per-route stats. */
export const logRoutes: RoutePlugin<'logs'> = async (app, { deps }) => {
  const { logs } = deps;
  app.get(
    '/api/logs/sources',
    {
      config: { access: 'admin' },
      schema: {
        ...common,
        summary: 'The log sources, with their number of lines and the time of the newest',
        response: {
          200: Type.Object({
            sources: Type.Array(
              Type.Object({
                name: Type.String(),
                count: Type.Integer(),
                lastAt: Type.Union([Type.String(), Type.Null()]),
              }),
            ),
          }),
        },
      },
    },
    async () => ({ sources: await logs.sources() }),
  );
  app.get(
    '/api/logs/search',
    {
      config: { access: 'admin' },
      schema: {
        ...common,
        summary: 'Lines of every source (or of the sources named), newest first',
        querystring: Type.Object({
          ...Filters,
          source: Type.Optional(Type.String({ maxLength: 200, description: 'Comma-separated source names' })),
        }),
        response: { 200: Page },
      },
    },
    async (request) => {
      const { source, ...filter } = request.query;
      const sources = source
        ? await Promise.all(
            source
              .split(',')
              .filter(Boolean)
              .map((s) => logs.resolveSource(s.trim())),
          )
        : undefined;
      return logs.read({ ...filter, sources });
    },
  );
  app.get(
    '/api/logs/stats',
    {
      config: { access: 'admin' },
      schema: {
        ...common,
        summary: 'API requests per minute and route: count, 5xx errors, latency percentiles (default: the last hour)',
        querystring: Type.Object({
          from: Filters.from,
          to: Filters.to,
          route: Type.Optional(
            Type.String({ maxLength: 512, description: 'A route pattern, e.g. /api/database/records/:tableName' }),
          ),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, default: 1000 })),
        }),
        response: {
          200: Type.Object({
            stats: Type.Array(
              Type.Object({
                minute: Type.String(),
                method: Type.String(),
                route: Type.String(),
                count: Type.Integer(),
                errors: Type.Integer(),
                p50Ms: Type.Number(),
                p95Ms: Type.Number(),
                p99Ms: Type.Number(),
              }),
            ),
          }),
        },
      },
    },
    async (request) => ({ stats: await logs.stats(request.query) }),
  );
  app.get(
    '/api/logs/:source',
    {
      config: { access: 'admin' },
      schema: {
        ...common,
        summary: "One source's lines, newest first (InsForge's names such as postgres.logs work too)",
        params: Type.Object({ source: Type.String({ minLength: 1, maxLength: 64 }) }),
        querystring: Type.Object(Filters),
        response: { 200: Page },
      },
    },
    async (request) => logs.read({ ...request.query, sources: [await logs.resolveSource(request.params.source)] }),
  );
};
