import { Type } from 'typebox';
import { tool } from '../types.js';
import { json, table } from '../format.js';
import { bulkUpsert } from '../../database/bulk.js';

const TableName = Type.String({ minLength: 1, maxLength: 63, description: 'A table of schema public' });

/** Tables, SQL and bulk loads: the services behind /api/database/tables, /advance/rawsql and /advance/bulk-upsert. */
export const databaseTools = [
  tool<Record<string, never>>({
    name: 'list-tables',
    description: 'List the tables of schema public.',
    input: Type.Object({}),
    readOnly: true,
    run: async (_a, ctx) => {
      const names = await ctx.services.tables.list();
      return names.length ? names.join('\n') : '(no tables yet: create one with run-raw-sql, e.g. "create table notes (...)")';
    },
  }),
  tool<{ query: string; params: unknown[] }>({
    name: 'run-raw-sql',
    description:
      'Run one SQL statement as the owner role (DDL, policies, functions, queries) with $1.. bind parameters. Answers the rows as a table. ' +
      'Errors carry Postgres\'s message and position. Use it to create tables, enable RLS and write policies.',
    input: Type.Object({
      query: Type.String({ minLength: 1, maxLength: 1_000_000 }),
      params: Type.Array(Type.Unknown(), { default: [], maxItems: 10_000, description: 'Values for $1, $2, ...' }),
    }),
    readOnly: false,
    destructive: true,
    run: async ({ query, params }, ctx) => {
      const r = await ctx.services.tables.sql(query, params);
      return r.rows.length ? `${table(r.rows.slice(0, 200))}\n${r.rowCount} row(s)${r.rows.length > 200 ? ', first 200 shown: add a limit' : ''}` : `OK, ${r.rowCount} row(s) affected`;
    },
  }),
  tool<{ table: string; format: 'csv' | 'json'; data: string; upsertKey?: string }>({
    name: 'bulk-upsert',
    description:
      'Insert many records at once from CSV (header line first) or JSON (an array of objects) text; with upsertKey, rows whose key exists are updated. ' +
      'Same as POST /api/database/advance/bulk-upsert.',
    input: Type.Object({
      table: TableName,
      format: Type.Union([Type.Literal('csv'), Type.Literal('json')]),
      data: Type.String({ minLength: 1, maxLength: 20 * 1024 * 1024 }),
      upsertKey: Type.Optional(Type.String({ minLength: 1, maxLength: 63 })),
    }),
    readOnly: false,
    run: async (a, ctx) => json(await bulkUpsert(ctx.services.records, { table: a.table, data: Buffer.from(a.data), filename: `data.${a.format}`, upsertKey: a.upsertKey })),
  }),
  tool<Record<string, never>>({
    name: 'generate-typescript-types',
    description: 'The TypeScript `Database` type of schema public in Supabase\'s format (tables, views, functions, enums, relationships), for postgrest-js / supabase-js. Save it as database.types.ts.',
    input: Type.Object({}),
    readOnly: true,
    run: async (_a, ctx) => ctx.services.typegen.typescript(),
  }),
];
