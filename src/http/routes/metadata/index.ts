import { Type } from '@fastify/type-provider-typebox';
import type { RoutePlugin } from '../../types.js';

const admin = { access: 'admin' as const };

/** GET /api/metadata (the whole backend in one call) and GET /api/metadata/{table} (docs/metadata.md). */
export const metadataRoutes: RoutePlugin<'metadata'> = async (app, { deps }) => {
  app.get(
    '/api/metadata',
    {
      config: admin,
      schema: {
        tags: ['metadata'],
        summary:
          'Version, auth settings, tables, buckets, functions and realtime in one answer (InsForge get-backend-metadata)',
        querystring: Type.Object({ mcp: Type.Optional(Type.String()) }),
        response: { 200: Type.Object({ version: Type.String() }, { additionalProperties: true }) },
      },
    },
    async () => deps.metadata.all(),
  );

  app.get(
    '/api/metadata/:table',
    {
      config: admin,
      schema: {
        tags: ['metadata'],
        summary: 'One table of schema public: columns, keys, foreign keys, indexes, RLS, policies, row estimate',
        params: Type.Object({ table: Type.String({ maxLength: 256 }) }),
        response: { 200: Type.Object({ tableName: Type.String() }, { additionalProperties: true }) },
      },
    },
    async (request) => deps.metadata.table(request.params.table),
  );
};
