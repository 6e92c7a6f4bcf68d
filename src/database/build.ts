import { AppError } from '../errors/index.js';
import type { ReadNode, RecordsQuery } from './ast.js';
import {
  compileRead,
  compileReturning,
  newContext,
  nodeWhere,
  type CompileContext,
  type ReadCount,
  type Statement,
} from './compile.js';
import { resolveColumn } from './filters.js';
import { quoteIdent, tableRef } from './ident.js';
import type { ColumnMeta, TableMeta } from './schema.js';
import type { BodyFormat } from './media.js';

export { resolveColumn } from './filters.js';
export type { Statement } from './compile.js';

/** Postgres takes at most 65535 bind parameters per statement; stay well below. */
const MAX_PARAMS = 30_000;

/** A context that knows only `table` (no embedding): for callers without the schema at hand. */
function soloContext(table: TableMeta): CompileContext {
  return newContext(new Map([[table.name, table]]), []);
}

/** Rows as a JSON array text (built by Postgres) plus the total of matching rows. */
export function buildSelect(
  table: TableMeta,
  q: ReadNode,
  defaultLimit = 100,
  ctx = soloContext(table),
  format: BodyFormat = 'json',
  count?: ReadCount,
): Statement {
  return compileRead(ctx, table, q, defaultLimit, { format, count });
}

/** A write statement, answering with the written rows (projected by `select`) when `representation`. */
function finish(
  ctx: CompileContext,
  table: TableMeta,
  node: ReadNode,
  sql: string,
  representation: boolean,
  countInserted = false,
): Statement {
  return representation || countInserted
    ? compileReturning(ctx, table, node, sql, countInserted)
    : { text: sql, values: ctx.p.values };
}

export interface InsertOptions {
  representation: boolean;
  select: ReadNode['select'];
  /** Upsert: the conflict target and whether to merge or ignore duplicates. */
  upsert: null | { onConflict: string[]; resolution: 'merge' | 'ignore' };
  /** `columns=`: only these keys are inserted; a row without one gets null (or the default with `missing`). */
  columns?: string[] | null;
  /** `Prefer: missing=default`: with `columns`, a missing key takes the column default. */
  missingDefault?: boolean;
}

/** The columns an insert writes: `columns=` if given, else the union of the rows' keys. */
function insertColumns(
  table: TableMeta,
  rows: Array<Record<string, unknown>>,
  columns: string[] | null | undefined,
): string[] {
  for (const row of rows) {
    if (!row || typeof row !== 'object' || Array.isArray(row)) {
      throw new AppError('INVALID_INPUT', { message: 'Each record must be a JSON object.' });
    }
  }
  if (columns) return columns.map((c) => resolveColumn(table, c).name);
  const names: string[] = [];
  const seen = new Set<string>();
  for (const row of rows) {
    for (const k of Object.keys(row)) {
      if (!seen.has(k)) {
        seen.add(k);
        names.push(resolveColumn(table, k).name);
      }
    }
  }
  return names;
}

/** Inserts `rows` (JSON objects); keys missing in a row take the column default (or null with `columns=`). */
export function buildInsert(
  table: TableMeta,
  rows: Array<Record<string, unknown>>,
  opts: InsertOptions,
  ctx = soloContext(table),
): Statement {
  const p = ctx.p;
  const cols = insertColumns(table, rows, opts.columns).map((n) => table.columns.get(n)!);
  if (rows.length * cols.length > MAX_PARAMS) {
    throw new AppError('INVALID_INPUT', {
      message: `At most ${MAX_PARAMS} values per request: send fewer records at a time.`,
    });
  }
  const missing = opts.columns && !opts.missingDefault ? 'null' : 'default';
  let sql: string;
  if (!cols.length) {
    // No values at all: every column takes its default.
    const first = table.columnList[0];
    if (!first) throw new AppError('INVALID_INPUT', { message: `Table "${table.name}" has no columns.` });
    sql = `insert into ${tableRef(table)} (${quoteIdent(first.name)}) values ${rows.map(() => '(default)').join(', ')}`;
  } else {
    // PostgREST's missing=default evaluates each column's default for every row, so a serial or
    // identity column takes one sequence value per row, given or not (sequence gaps as there).
    const given = (c: ColumnMeta, v: unknown) =>
      opts.missingDefault && opts.columns && c.sequence
        ? `(select ${p.typed(c, v, 'body')} from nextval(${p.add(c.sequence)}::regclass))`
        : p.typed(c, v, 'body');
    const tuples = rows.map(
      (row) => `(${cols.map((c) => (Object.hasOwn(row, c.name) ? given(c, row[c.name]) : missing)).join(', ')})`,
    );
    sql = `insert into ${tableRef(table)} (${cols.map((c) => quoteIdent(c.name)).join(', ')}) values ${tuples.join(', ')}`;
  }
  if (opts.upsert) {
    const target = opts.upsert.onConflict.map((c) => quoteIdent(resolveColumn(table, c).name));
    // Every sent column is set, the conflict target's too (as PostgREST does): a row that
    // sends only its key is still "merged", so it is returned.
    sql +=
      opts.upsert.resolution === 'merge' && cols.length
        ? ` on conflict (${target.join(', ')}) do update set ${cols.map((c) => `${quoteIdent(c.name)} = excluded.${quoteIdent(c.name)}`).join(', ')}`
        : ` on conflict (${target.join(', ')}) do nothing`;
  }
  const node: ReadNode = { select: opts.select, filters: [], order: [], limit: null, offset: null };
  return finish(ctx, table, node, sql, opts.representation, opts.upsert !== null);
}

function requireFilter(q: RecordsQuery): void {
  if (!q.filters.length) throw new AppError('FILTER_REQUIRED');
  if (q.limit !== null || q.offset !== null || q.order.length) {
    throw new AppError('INVALID_QUERY', { message: 'limit, offset and order apply to reading records only.' });
  }
}

/** The WHERE of an update or delete: the top-level filters (embedded ones only shape the returned rows). */
function writeWhere(ctx: CompileContext, table: TableMeta, q: RecordsQuery): string {
  const where = nodeWhere(ctx, table, { ...q, select: null }, 't0');
  return ` where ${where.join(' and ')}`;
}

/** Updates the rows matching the filters with the fields of `patch`. */
export function buildUpdate(
  table: TableMeta,
  q: RecordsQuery,
  patch: Record<string, unknown>,
  representation: boolean,
  ctx = soloContext(table),
): Statement {
  requireFilter(q);
  const keys = Object.keys(patch);
  if (!keys.length)
    throw new AppError('INVALID_INPUT', { message: 'The body must have at least one field to update.' });
  const sets = keys.map((k) => {
    const col = resolveColumn(table, k);
    return `${quoteIdent(col.name)} = ${ctx.p.typed(col, patch[k], 'body')}`;
  });
  const sql = `update ${tableRef(table)} t0 set ${sets.join(', ')}${writeWhere(ctx, table, q)}`;
  return finish(ctx, table, q, sql, representation);
}

/** Deletes the rows matching the filters. */
export function buildDelete(
  table: TableMeta,
  q: RecordsQuery,
  representation: boolean,
  ctx = soloContext(table),
): Statement {
  requireFilter(q);
  const sql = `delete from ${tableRef(table)} t0${writeWhere(ctx, table, q)}`;
  return finish(ctx, table, q, sql, representation);
}
