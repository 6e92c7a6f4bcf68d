import { AppError } from '../errors/index.js';
import { qualified, quoteIdent, safe } from './ident.js';
import type { Condition, Filter, OrderKey, RecordsQuery } from './query.js';
import type { ColumnMeta, TableMeta } from './schema.js';
import { cast, toParam } from './types.js';

/** Postgres takes at most 65535 bind parameters per statement; stay well below. */
const MAX_PARAMS = 30_000;

/** One parameterised statement. */
export interface Statement {
  text: string;
  values: unknown[];
}

/** Collects bind parameters; `cast` gives the typed placeholder of a value for a column. */
class Params {
  readonly values: unknown[] = [];
  add(v: unknown): string {
    this.values.push(v);
    return `$${this.values.length}`;
  }
  typed(col: ColumnMeta, v: unknown, source: 'query' | 'body'): string {
    this.values.push(toParam(col, v, source));
    return cast(this.values.length, col);
  }
}

/** Resolves a client-given column against the real table (400 naming it otherwise). */
export function resolveColumn(table: TableMeta, name: string): ColumnMeta {
  const col = table.columns.get(name);
  if (!col) {
    throw new AppError('UNKNOWN_COLUMN', { message: `Table "${table.name}" has no column "${safe(name)}".` });
  }
  return col;
}

const COMPARE: Record<string, string> = { eq: '=', neq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' };

function condition(table: TableMeta, c: Condition, p: Params): string {
  const col = resolveColumn(table, c.column);
  const ref = quoteIdent(col.name);
  let sql: string;
  switch (c.op) {
    case 'in': {
      const list = c.value as string[];
      sql = list.length ? `${ref} in (${list.map((v) => p.typed(col, v, 'query')).join(', ')})` : 'false';
      break;
    }
    case 'is':
      if (c.value !== 'null' && col.kind !== 'boolean') {
        throw new AppError('INVALID_VALUE', { message: `"is.${c.value}" needs a boolean column; "${col.name}" is not.` });
      }
      sql = `${ref} is ${c.value}`;
      break;
    case 'like':
    case 'ilike': {
      // PostgREST allows * for % so patterns need no percent-encoding.
      const pattern = p.add(String(c.value).replace(/\*/g, '%'));
      sql = `${col.kind === 'text' ? ref : `${ref}::text`} ${c.op} ${pattern}`;
      break;
    }
    default:
      sql = `${ref} ${COMPARE[c.op]} ${p.typed(col, c.value, 'query')}`;
  }
  return c.negate ? `not (${sql})` : sql;
}

function filterSql(table: TableMeta, f: Filter, p: Params): string {
  if (f.type === 'cond') return condition(table, f, p);
  const inner = f.items.map((i) => filterSql(table, i, p)).join(f.type === 'and' ? ' and ' : ' or ');
  return f.negate ? `not (${inner})` : `(${inner})`;
}

function whereSql(table: TableMeta, filters: Filter[], p: Params): string {
  return filters.length ? ` where ${filters.map((f) => filterSql(table, f, p)).join(' and ')}` : '';
}

function orderSql(table: TableMeta, order: OrderKey[]): string {
  if (!order.length) return '';
  return ` order by ${order
    .map((o) => `${quoteIdent(resolveColumn(table, o.column).name)} ${o.dir}${o.nulls ? ` nulls ${o.nulls}` : ''}`)
    .join(', ')}`;
}

function selectList(table: TableMeta, select: string[] | null): string {
  if (!select) return '*';
  return select.map((c) => quoteIdent(resolveColumn(table, c).name)).join(', ');
}

/** The columns a select names (for the outer projection), in output order. */
function selectNames(table: TableMeta, select: string[] | null): string {
  return (select ?? table.columnList.map((c) => c.name)).map(quoteIdent).join(', ');
}

/** Rows as a JSON array text (built by Postgres) plus the total of matching rows. */
export function buildSelect(table: TableMeta, q: RecordsQuery, defaultLimit = 100): Statement {
  const p = new Params();
  const cols = selectList(table, q.select);
  const where = whereSql(table, q.filters, p);
  const order = orderSql(table, q.order);
  const limit = p.add(q.limit ?? defaultLimit);
  const offset = p.add(q.offset ?? 0);
  const from = qualified(table.name);
  // The window count runs over every matching row before the limit; the fallback count only
  // runs when the page is empty (coalesce evaluates lazily).
  const text =
    `with page as (select ${cols}, count(*) over () as "__plinth_total" from ${from}${where}${order} limit ${limit} offset ${offset}) ` +
    `select coalesce((select json_agg(r.*) from (select ${selectNames(table, q.select)} from page) r), '[]')::text as body, ` +
    `coalesce((select "__plinth_total" from page limit 1), (select count(*) from ${from}${where})) as total`;
  return { text, values: p.values };
}

function returning(table: TableMeta, select: string[] | null, representation: boolean): string {
  return representation ? ` returning ${selectList(table, select)}` : '';
}

/** Wraps a writing statement so Postgres returns the written rows as JSON text. */
function asJson(sql: string, representation: boolean): string {
  return representation ? `with w as (${sql}) select coalesce(json_agg(w.*), '[]')::text as body from w` : sql;
}

export interface InsertOptions {
  representation: boolean;
  select: string[] | null;
  /** Upsert: the conflict target and whether to merge or ignore duplicates. */
  upsert: null | { onConflict: string[]; resolution: 'merge' | 'ignore' };
}

/** Inserts `rows` (JSON objects); keys missing in a row take the column default. */
export function buildInsert(table: TableMeta, rows: Array<Record<string, unknown>>, opts: InsertOptions): Statement {
  const p = new Params();
  const names: string[] = [];
  const seen = new Set<string>();
  for (const row of rows) {
    if (!row || typeof row !== 'object' || Array.isArray(row)) {
      throw new AppError('INVALID_INPUT', { message: 'Each record must be a JSON object.' });
    }
    for (const k of Object.keys(row)) {
      if (!seen.has(k)) {
        seen.add(k);
        names.push(resolveColumn(table, k).name);
      }
    }
  }
  const cols = names.map((n) => table.columns.get(n)!);
  if (rows.length * cols.length > MAX_PARAMS) {
    throw new AppError('INVALID_INPUT', { message: `At most ${MAX_PARAMS} values per request: send fewer records at a time.` });
  }
  let sql: string;
  if (!cols.length) {
    // No values at all: every column takes its default.
    const first = table.columnList[0];
    if (!first) throw new AppError('INVALID_INPUT', { message: `Table "${table.name}" has no columns.` });
    sql = `insert into ${qualified(table.name)} (${quoteIdent(first.name)}) values ${rows.map(() => '(default)').join(', ')}`;
  } else {
    const tuples = rows.map(
      (row) => `(${cols.map((c) => (Object.hasOwn(row, c.name) ? p.typed(c, row[c.name], 'body') : 'default')).join(', ')})`,
    );
    sql = `insert into ${qualified(table.name)} (${cols.map((c) => quoteIdent(c.name)).join(', ')}) values ${tuples.join(', ')}`;
  }
  if (opts.upsert) {
    const target = opts.upsert.onConflict.map((c) => quoteIdent(resolveColumn(table, c).name));
    // Every sent column is set, the conflict target's too (as PostgREST does): a row that
    // sends only its key is still "merged", so it is returned.
    const updates = cols;
    sql +=
      opts.upsert.resolution === 'merge' && updates.length
        ? ` on conflict (${target.join(', ')}) do update set ${updates.map((c) => `${quoteIdent(c.name)} = excluded.${quoteIdent(c.name)}`).join(', ')}`
        : ` on conflict (${target.join(', ')}) do nothing`;
  }
  sql += returning(table, opts.select, opts.representation);
  return { text: asJson(sql, opts.representation), values: p.values };
}

function requireFilter(q: RecordsQuery): void {
  if (!q.filters.length) throw new AppError('FILTER_REQUIRED');
  if (q.limit !== null || q.offset !== null || q.order.length) {
    throw new AppError('INVALID_QUERY', { message: 'limit, offset and order apply to reading records only.' });
  }
}

/** Updates the rows matching the filters with the fields of `patch`. */
export function buildUpdate(table: TableMeta, q: RecordsQuery, patch: Record<string, unknown>, representation: boolean): Statement {
  requireFilter(q);
  const keys = Object.keys(patch);
  if (!keys.length) throw new AppError('INVALID_INPUT', { message: 'The body must have at least one field to update.' });
  const p = new Params();
  const sets = keys.map((k) => {
    const col = resolveColumn(table, k);
    return `${quoteIdent(col.name)} = ${p.typed(col, patch[k], 'body')}`;
  });
  const sql = `update ${qualified(table.name)} set ${sets.join(', ')}${whereSql(table, q.filters, p)}${returning(table, q.select, representation)}`;
  return { text: asJson(sql, representation), values: p.values };
}

/** Deletes the rows matching the filters. */
export function buildDelete(table: TableMeta, q: RecordsQuery, representation: boolean): Statement {
  requireFilter(q);
  const p = new Params();
  const sql = `delete from ${qualified(table.name)}${whereSql(table, q.filters, p)}${returning(table, q.select, representation)}`;
  return { text: asJson(sql, representation), values: p.values };
}
