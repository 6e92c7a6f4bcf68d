import { Type } from '@fastify/type-provider-typebox';
import type { RoutePlugin } from '../../types.js';
import { RealtimeTables } from '../../../realtime/tables.js';
import { sqlAsRoutes } from './sql-as.js';
import { AlterTable, CreateTable, RunSql, TableRef } from '../../../database/schemas.js';

const Message = Type.Object({
  message: Type.String(),
  tableName: Type.String(),
  nextActions: Type.Optional(Type.String()),
});
const ColumnOut = Type.Object({
  name: Type.String(),
  type: Type.String(),
  nullable: Type.Boolean(),
  unique: Type.Boolean(),
  default: Type.Union([Type.String(), Type.Null()]),
  isPrimaryKey: Type.Boolean(),
  foreignKey: Type.Union([
    Type.Object({ table: Type.String(), column: Type.String(), on_delete: Type.String() }),
    Type.Null(),
  ]),
});
const SchemaOut = Type.Object({
  tableName: Type.String(),
  rlsEnabled: Type.Boolean(),
  realtime: Type.Boolean(),
  columns: Type.Array(ColumnOut),
});
const TableParams = Type.Object({ tableName: TableRef });
const admin = { access: 'admin' as const };

/** Table management (admin) and the admin SQL endpoint. */
export const tableRoutes: RoutePlugin<'db' | 'tables' | 'auth' | 'owner'> = async (app, { deps }) => {
  const { tables } = deps;
  const realtime = new RealtimeTables(deps.db);
  await sqlAsRoutes(app, { deps });

  app.get(
    '/api/database/tables',
    {
      config: admin,
      schema: {
        tags: ['database'],
        summary: 'List the tables of schema public',
        response: { 200: Type.Array(Type.String()) },
      },
    },
    async () => tables.list(),
  );

  app.post(
    '/api/database/tables',
    {
      config: admin,
      schema: {
        tags: ['database'],
        summary: 'Create a table (id, created_at, updated_at are added)',
        body: CreateTable,
        response: { 201: Message },
      },
    },
    async (request, reply) => {
      const { tableName, rlsEnabled = false, columns } = request.body;
      await tables.create({ tableName, rlsEnabled, columns });
      return reply.status(201).send({
        message: 'Table created successfully',
        tableName,
        nextActions: rlsEnabled
          ? `Row-level security is on and no policy exists yet: users and the anon key see no rows until you add policies with POST /api/database/sql, e.g. create policy owner_only on public."${tableName}" using (owner = (select auth.uid())).`
          : `Row-level security is off: anyone holding the anon key can read and write every row of "${tableName}". To restrict it, run "alter table public.${tableName} enable row level security" and create policies with POST /api/database/sql.`,
      });
    },
  );

  app.get(
    '/api/database/tables/:tableName/schema',
    {
      config: admin,
      schema: {
        tags: ['database'],
        summary: 'The schema of a table',
        params: TableParams,
        response: { 200: SchemaOut },
      },
    },
    async (request) => {
      const schema = await tables.describe(request.params.tableName);
      return { ...schema, realtime: await realtime.isEnabled(schema.tableName) };
    },
  );

  app.get(
    '/api/database/tables/:tableName/policies',
    {
      config: admin,
      schema: {
        tags: ['database'],
        summary: "The table's row-level security policies (pg_policies)",
        params: TableParams,
        response: {
          200: Type.Object({
            tableName: Type.String(),
            rlsEnabled: Type.Boolean(),
            policies: Type.Array(
              Type.Object({
                name: Type.String(),
                command: Type.String(),
                permissive: Type.Boolean(),
                roles: Type.Array(Type.String()),
                using: Type.Union([Type.String(), Type.Null()]),
                withCheck: Type.Union([Type.String(), Type.Null()]),
              }),
            ),
          }),
        },
      },
    },
    async (request) => tables.policies(request.params.tableName),
  );

  app.patch(
    '/api/database/tables/:tableName/schema',
    {
      config: admin,
      schema: {
        tags: ['database'],
        summary: 'Change a table: all operations in one transaction',
        params: TableParams,
        body: AlterTable,
        response: {
          200: Type.Object({ message: Type.String(), tableName: Type.String(), operations: Type.Array(Type.String()) }),
        },
      },
    },
    async (request) => {
      const r = await tables.alter(request.params.tableName, request.body);
      return { message: 'Table schema updated successfully', tableName: r.tableName, operations: r.operations };
    },
  );

  app.delete(
    '/api/database/tables/:tableName',
    {
      config: admin,
      schema: {
        tags: ['database'],
        summary: 'Delete a table and all its data',
        params: TableParams,
        response: { 200: Message },
      },
    },
    async (request) => {
      await tables.drop(request.params.tableName);
      return { message: 'Table deleted successfully', tableName: request.params.tableName };
    },
  );

  app.post(
    '/api/database/sql',
    {
      config: admin,
      schema: {
        tags: ['database'],
        summary:
          'Run SQL as the owner role in one transaction: one statement with params, or a script of several without (the rows of the last come back)',
        body: RunSql,
        response: { 200: Type.Object({ rows: Type.Array(Type.Unknown()), rowCount: Type.Integer() }) },
      },
    },
    async (request) => tables.sql(request.body.query, request.body.params ?? []),
  );
};
