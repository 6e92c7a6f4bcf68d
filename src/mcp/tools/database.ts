import { type Static, Type } from 'typebox';
import { tool } from '../types.js';
import { json, table } from '../format.js';
import { bulkUpsert } from '../../database/bulk.js';
import { RunSql, TableRef } from '../../database/schemas.js';

/** Tables, SQL and bulk loads: the services behind /api/database/tables, /advance/rawsql and /advance/bulk-upsert. */
export const databaseTools = [
  tool<Record<string, never>>({
    name: 'list-tables',
    description: 'List the tables of schema public.',
    input: Type.Object({}),
    readOnly: true,
    run: async (_a, ctx) => {
      const names = await ctx.services.tables.list();
      return names.length
        ? names.join('\n')
        : '(no tables yet: create one with run-raw-sql, e.g. "create table notes (...)")';
    },
  }),
  tool<Static<typeof RunSql>>({
    name: 'run-raw-sql',
    description:
      'Run SQL as the owner role (DDL, policies, functions, queries), all in one transaction: one statement with $1.. bind parameters, ' +
      'or, with no params, a script of several statements separated by ; (all run; the rows of the last one come back; any failure rolls back all). ' +
      "Answers the rows as a table; dates and times as Postgres's own text. Errors carry Postgres's message and position. " +
      'Use it to create tables, enable RLS and write policies; for a change to keep in the migration history use apply-migration.',
    input: RunSql,
    readOnly: false,
    destructive: true,
    run: async ({ query, params }, ctx) => {
      const r = await ctx.services.tables.sql(query, params ?? []);
      return r.rows.length
        ? `${table(r.rows.slice(0, 200))}\n${r.rowCount} row(s)${r.rows.length > 200 ? ', first 200 shown: add a limit' : ''}`
        : `OK, ${r.rowCount} row(s) affected`;
    },
  }),
  tool<{ table: string; format: 'csv' | 'json'; data: string; upsertKey?: string }>({
    name: 'bulk-upsert',
    description:
      'Insert many records at once from CSV (header line first) or JSON (an array of objects) text; with upsertKey, rows whose key exists are updated. ' +
      'Same as POST /api/database/advance/bulk-upsert.',
    input: Type.Object({
      table: TableRef,
      format: Type.Union([Type.Literal('csv'), Type.Literal('json')]),
      data: Type.String({ minLength: 1, maxLength: 20 * 1024 * 1024 }),
      upsertKey: Type.Optional(Type.String({ minLength: 1, maxLength: 63 })),
    }),
    readOnly: false,
    run: async (a, ctx) =>
      json(
        await bulkUpsert(ctx.services.records, {
          table: a.table,
          data: Buffer.from(a.data),
          filename: `data.${a.format}`,
          upsertKey: a.upsertKey,
        }),
      ),
  }),
  tool<Record<string, never>>({
    name: 'generate-typescript-types',
    description:
      "The TypeScript `Database` type of schema public in Supabase's format (tables, views, functions, enums, relationships), for postgrest-js / supabase-js. Save it as database.types.ts.",
    input: Type.Object({}),
    readOnly: true,
    run: async (_a, ctx) => ctx.services.typegen.typescript(),
  }),
];
