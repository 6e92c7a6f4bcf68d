import { Type } from '@fastify/type-provider-typebox';
import type { RoutePlugin } from '../../types.js';

/** The project's public key, for an admin to copy into a client (the dashboard shows it). */
export const keyRoutes: RoutePlugin<'credentials'> = async (app, { deps }) => {
  app.get(
    '/api/keys/anon',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['keys'],
        summary: 'The anon key (public: ships in browser and mobile clients, limited by RLS)',
        security: [{ apiKey: [] }],
        response: { 200: Type.Object({ anonKey: Type.String(), header: Type.String() }) },
      },
    },
    async () => ({ anonKey: deps.credentials.anonKey, header: 'apikey' }),
  );
};
