import { Type } from '@fastify/type-provider-typebox';
import type { RoutePlugin } from '../../types.js';
import { RealtimeTables } from '../../../realtime/tables.js';

const TableParams = Type.Object({ tableName: Type.String({ maxLength: 256 }) });
const Answer = Type.Object({
  message: Type.String(),
  tableName: Type.String(),
  realtime: Type.Boolean(),
  channels: Type.Array(Type.String()),
  nextActions: Type.Optional(Type.String()),
});

/** Turning database changes on and off per table (admin): the realtime trigger. */
export const realtimeTableRoutes: RoutePlugin<'db'> = async (app, { deps }) => {
  // Stateless over the database: the trigger is the state.
  const realtimeTables = new RealtimeTables(deps.db);

  app.post(
    '/api/database/tables/:tableName/realtime',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['database'],
        summary: 'Publish the changes of a table on realtime channels table:<t> and table:<t>:<id>',
        params: TableParams,
        response: { 200: Answer },
      },
    },
    async (request) => {
      const t = request.params.tableName;
      const { primaryKey } = await realtimeTables.enable(t);
      return {
        message: 'Realtime is on for this table',
        tableName: t,
        realtime: true,
        channels: primaryKey ? [`table:${t}`, `table:${t}:<${primaryKey}>`] : [`table:${t}`],
        nextActions: `Subscribe to table:${t} with the SDK (client.realtime.subscribe). Each subscriber receives only the rows its SELECT policies let it see.`,
      };
    },
  );

  app.delete(
    '/api/database/tables/:tableName/realtime',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['database'],
        summary: 'Stop publishing the changes of a table',
        params: TableParams,
        response: { 200: Answer },
      },
    },
    async (request) => {
      await realtimeTables.disable(request.params.tableName);
      return {
        message: 'Realtime is off for this table',
        tableName: request.params.tableName,
        realtime: false,
        channels: [],
      };
    },
  );
};
