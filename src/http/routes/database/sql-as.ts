import { Type } from '@fastify/type-provider-typebox';
import type { RoutePlugin } from '../../types.js';
import { runAs } from '../../../database/sql-as.js';

/** "Test as user": one statement run as a user or anon, always rolled back (admin only). */
export const sqlAsRoutes: RoutePlugin<'auth' | 'owner'> = async (app, { deps }) => {
  app.post(
    '/api/database/sql/as',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['database'],
        summary:
          'Run one SQL statement as a user (role authenticated, their auth.uid()) or as anon, then roll it back: what their policies let them see',
        body: Type.Object({
          query: Type.String({ minLength: 1, maxLength: 100_000 }),
          userId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
            description: 'The user to act as; null for the anon key.',
          }),
        }),
        response: {
          200: Type.Object({
            rows: Type.Array(Type.Unknown()),
            rowCount: Type.Integer(),
            role: Type.String(),
            rolledBack: Type.Boolean(),
          }),
        },
      },
    },
    async (request) => {
      const { query, userId } = request.body;
      const who = userId ? { userId, email: (await deps.auth.getUser(userId)).email } : null;
      return runAs(deps.owner.db, query, who);
    },
  );
};
