import { Type } from '@fastify/type-provider-typebox';
import type { RoutePlugin } from '../../types.js';

/** Typed clients: the `Database` type of schema public in Supabase's format. */
export const typesRoutes: RoutePlugin<'typegen'> = async (app, { deps }) => {
  app.get(
    '/api/database/types/typescript',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['database'],
        summary:
          "TypeScript types of schema public in Supabase's format (tables, views, functions, enums, relationships), for postgrest-js and supabase-js",
        response: { 200: Type.Object({ types: Type.String() }) },
      },
    },
    async () => ({ types: await deps.typegen.typescript() }),
  );
};
