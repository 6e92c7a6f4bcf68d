import { Type } from 'typebox';
import { tool } from '../types.js';
import { json, table } from '../format.js';
import type { ConfigVariable } from '../../config/effective.js';
import { TableRef } from '../../database/schemas.js';

/** One configuration row as text: a secret says only whether it is set. */
const shown = (v: ConfigVariable) => ({
  name: v.name,
  value: v.secret ? (v.set ? 'set (hidden)' : 'not set') : (v.value ?? 'not set'),
  source: v.source,
});

/**
 * The backend at a glance and one table in detail (GET /api/metadata and /api/metadata/{table}),
 * and the configuration the server runs with (GET /api/admin/config).
 */
export const metadataTools = [
  tool<Record<string, never>>({
    name: 'get-backend-metadata',
    description:
      'The whole backend in one call (same as GET /api/metadata): version, auth settings, tables with their columns and RLS, buckets, functions, realtime and the other areas. ' +
      'Start here to see what exists before changing anything.',
    input: Type.Object({}),
    readOnly: true,
    run: async (_a, ctx) => json(await ctx.services.metadata.all()),
  }),
  tool<{ tableName: string }>({
    name: 'get-table-schema',
    description:
      "A table's columns (type, nullable, default), primary key, foreign keys, indexes, whether RLS is on and its RLS policies, and a row estimate (same as GET /api/metadata/{table}).",
    input: Type.Object({ tableName: TableRef }),
    readOnly: true,
    run: async ({ tableName }, ctx) => {
      const m = await ctx.services.metadata.table(tableName);
      const fks = m.foreignKeys.map((f) => ({
        name: f.name,
        columns: f.columns.join(', '),
        references: `${f.referencedTable}(${f.referencedColumns.join(', ')})`,
        onDelete: f.onDelete,
      }));
      return [
        `table ${m.tableName} (RLS ${m.rlsEnabled ? 'on' : 'off'}, realtime ${m.realtime ? 'on' : 'off'}, ~${m.recordCount} rows, primary key (${m.primaryKey.join(', ')}))`,
        table(m.columns),
        `\nforeign keys:\n${table(fks)}`,
        `\nindexes:\n${table(m.indexes.map((i) => ({ name: i.name, definition: i.definition })))}`,
        `\npolicies:\n${table(m.policies)}`,
      ].join('\n');
    },
  }),
  tool<Record<string, never>>({
    name: 'get-config',
    description:
      'The configuration the server runs with (same as GET /api/admin/config): every environment variable it reads with its value and source (env or default), ' +
      'then derived facts (database, storage, realtime adapter, jobs, SMTP, AI, OAuth providers, version). Secrets never appear: they show as set (hidden) or not set.',
    input: Type.Object({}),
    readOnly: true,
    run: async (_a, ctx) => table(ctx.services.effectiveConfig().map(shown)),
  }),
];
