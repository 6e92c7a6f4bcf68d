import { AppError } from '../errors/index.js';
import { embedName, type AggregateItem, type ColumnItem, type EmbedItem, type Filter, type OrderKey, type ReadNode } from './ast.js';
import { colExpr, filterSql, jsonPath, orderTerm, Params, ref, resolveColumn, resolveReadable } from './filters.js';
import { quoteIdent, safe, schemaRef, tableRef } from './ident.js';
import { resolveRelation, toMany, type ForeignKeyInfo, type Relation } from './relations.js';
import type { TableMeta } from './schema.js';
import type { BodyFormat } from './media.js';

/** One parameterised statement. */
export interface Statement {
  text: string;
  values: unknown[];
  /** `count=planned|estimated`: the statement whose planner estimate is the total (EXPLAIN it as the caller). */
  estimate?: Statement;
}

/** `Prefer: count=`: exact (a count), planned (the planner's estimate), estimated (exact up to ESTIMATE_FROM rows, planned past it). */
export type CountKind = 'exact' | 'planned' | 'estimated';
/** `count=estimated` counts exactly up to this many rows (the largest page, PostgREST's db-max-rows). */
export const ESTIMATE_FROM = 1000;

/** What compiling needs: the tables and foreign keys of schema public, and the parameters. */
export interface CompileContext {
  tables: Map<string, TableMeta>;
  fks: ForeignKeyInfo[];
  p: Params;
  /** Counter for table aliases (t1, t2, ...) of embedded relations. */
  n: number;
}

export function newContext(tables: Map<string, TableMeta>, fks: ForeignKeyInfo[], p = new Params()): CompileContext {
  return { tables, fks, p, n: 0 };
}

interface Embed {
  item: EmbedItem;
  rel: Relation;
  table: TableMeta;
  parent: TableMeta;
  alias: string;
}

/**
 * The relation and table an embed item names, seen from `parent`: a foreign key, or else a
 * computed relationship (a function of the parent's row type returning rows of a table).
 */
function embedOf(ctx: CompileContext, parent: TableMeta, item: EmbedItem): Embed {
  const computed = parent.relFunctions?.get(item.relation);
  let rel: Relation;
  try {
    rel = resolveRelation(ctx.fks, parent.name, item.relation, item.hint);
  } catch (err) {
    if (!computed || !(err instanceof AppError) || err.code !== 'RELATION_NOT_FOUND') throw err;
    rel = { kind: computed.many ? 'one-to-many' : 'many-to-one', constraint: item.relation, table: computed.table, parentColumns: [], childColumns: [], fn: item.relation };
  }
  const table = ctx.tables.get(rel.table);
  if (!table) throw new AppError('TABLE_NOT_FOUND', { message: `No table "${safe(rel.table)}".` });
  return { item, rel, table, parent, alias: `t${++ctx.n}` };
}

/** `<table> tN`, or `<fn>(<parent row>) tN` for a computed relationship. */
function embedFrom(e: Embed, parentAlias: string): string {
  if (!e.rel.fn) return `${tableRef(e.table)} ${e.alias}`;
  return `${schemaRef(e.parent.schema)}.${quoteIdent(e.rel.fn)}(${parentAlias}::${tableRef(e.parent)}) ${e.alias}`;
}

function joinCondition(e: Embed, parentAlias: string): string {
  if (e.rel.fn) return 'true';
  const j = e.rel.junction;
  if (j) {
    // many-to-many: a junction row links the parent row and the embedded row.
    const ja = `${e.alias}j`;
    const toParent = j.toParent.map((c, i) => `${ref(ja, c)} = ${ref(parentAlias, e.rel.parentColumns[i]!)}`);
    const toChild = j.toChild.map((c, i) => `${ref(ja, c)} = ${ref(e.alias, e.rel.childColumns[i]!)}`);
    return `exists (select 1 from ${tableRef({ name: j.table, schema: e.table.schema })} ${ja} where ${[...toParent, ...toChild].join(' and ')})`;
  }
  return e.rel.childColumns.map((c, i) => `${ref(e.alias, c)} = ${ref(parentAlias, e.rel.parentColumns[i]!)}`).join(' and ');
}

function columnExpr(ctx: CompileContext, table: TableMeta, item: ColumnItem, alias: string): { expr: string; name: string } {
  const col = resolveReadable(table, item.name);
  let expr = colExpr(table, alias, col);
  if (item.path.length) expr = jsonPath(col, expr, item.path, ctx.p).expr;
  if (item.cast) expr = `(${expr})::${item.cast}`;
  return { expr, name: item.alias ?? item.path[item.path.length - 1]?.key ?? col.name };
}

interface Projection {
  cols: string[];
  names: string[];
  joins: string[];
  /** With an aggregate: the other selected expressions, grouped by. */
  groupBy: string[];
  aggregated: boolean;
}

type Add = (expr: string, name: string, strict: boolean) => void;

function aggregateExpr(ctx: CompileContext, table: TableMeta, item: AggregateItem, alias: string): { expr: string; name: string } {
  const input = item.column ? columnExpr(ctx, table, item.column, alias).expr : '*';
  const expr = `${item.fn}(${input})`;
  return { expr: item.cast ? `(${expr})::${item.cast}` : expr, name: item.alias ?? item.fn };
}

/** An embed as a lateral join: a JSON object (to-one) or array (to-many), or with `...` its columns in the parent row. */
function addEmbed(ctx: CompileContext, table: TableMeta, item: EmbedItem, alias: string, joins: string[], add: Add): void {
  const e = embedOf(ctx, table, item);
  const child = childQuery(ctx, e, alias);
  const ev = `e${e.alias}`;
  const toOne = !toMany(e.rel);
  if (item.spread) {
    const many = child.names.map((n) => `coalesce(json_agg(x.${quoteIdent(n)}), '[]'::json) as ${quoteIdent(n)}`).join(', ');
    joins.push(toOne ? ` left join lateral (select * from (${child.sql}) x limit 1) ${ev} on true` : ` left join lateral (select ${many} from (${child.sql}) x) ${ev} on true`);
    for (const n of child.names) add(`${ev}.${quoteIdent(n)}`, n, true);
    return;
  }
  joins.push(
    toOne
      ? ` left join lateral (select row_to_json(x.*) as v from (${child.sql}) x limit 1) ${ev} on true`
      : ` left join lateral (select coalesce(json_agg(x.*), '[]'::json) as v from (${child.sql}) x) ${ev} on true`,
  );
  add(`${ev}.v`, embedName(item), true);
}

/** The select list of a node (`expr as "name"`), the lateral joins of its embeds, and its grouping. */
function projection(ctx: CompileContext, table: TableMeta, node: ReadNode, alias: string): Projection {
  const cols: string[] = [];
  const names: string[] = [];
  const joins: string[] = [];
  const groupBy: string[] = [];
  const embeds = new Set<string>();
  let aggregated = false;
  const add: Add = (expr, name, strict) => {
    const at = names.indexOf(name);
    if (at >= 0) {
      if (!strict) return;
      // An embed named like a column of `*` (select=*,author_id(name)) takes its place, as in PostgREST.
      if (embeds.has(name)) throw new AppError('INVALID_QUERY', { message: `Two embedded relations or spread columns of select are named "${name}".`, nextActions: `Give one of them an alias, e.g. select=*,${name}2:${name}(*).` });
      names.splice(at, 1);
      cols.splice(at, 1);
    }
    if (strict) embeds.add(name);
    names.push(name);
    cols.push(`${expr} as ${quoteIdent(name)}`);
  };
  for (const item of node.select ?? [{ type: 'star' as const }]) {
    if (item.type === 'star') {
      for (const c of table.columnList) add(ref(alias, c.name), c.name, false);
      groupBy.push(...table.columnList.map((c) => ref(alias, c.name)));
    } else if (item.type === 'column' && item.name === 'count' && !item.path.length && !table.columns.has('count')) {
      // `messages(count)`: PostgREST's older form of count() when the table has no column "count".
      aggregated = true;
      add(item.cast ? `(count(*))::${item.cast}` : 'count(*)', item.alias ?? 'count', false);
    } else if (item.type === 'column') {
      const { expr, name } = columnExpr(ctx, table, item, alias);
      add(expr, name, false);
      groupBy.push(expr);
    } else if (item.type === 'aggregate') {
      aggregated = true;
      const { expr, name } = aggregateExpr(ctx, table, item, alias);
      add(expr, name, false);
    } else if (!item.empty) addEmbed(ctx, table, item, alias, joins, add);
  }
  if (aggregated && joins.length) {
    throw new AppError('INVALID_QUERY', { message: 'Aggregates (count(), sum(), ...) cannot be combined with embedded relations at the same level.', nextActions: 'Aggregate inside the embed instead, e.g. select=name,posts(count()).' });
  }
  return { cols, names, joins, groupBy: aggregated ? groupBy : [], aggregated };
}

const groupSql = (proj: Projection) => (proj.aggregated && proj.groupBy.length ? ` group by ${proj.groupBy.join(', ')}` : '');

/** The rows of an embedded relation for one parent row: its projection, join, filters, grouping, order and page. */
function childQuery(ctx: CompileContext, e: Embed, parentAlias: string): { sql: string; names: string[] } {
  const proj = projection(ctx, e.table, e.item.node, e.alias);
  const where = [joinCondition(e, parentAlias), ...nodeWhere(ctx, e.table, e.item.node, e.alias)];
  const node = e.item.node;
  const order = orderSql(ctx, e.table, node, e.alias);
  const page = `${node.limit !== null ? ` limit ${ctx.p.add(node.limit)}` : ''}${node.offset !== null ? ` offset ${ctx.p.add(node.offset)}` : ''}`;
  const sql = `select ${proj.cols.join(', ')} from ${embedFrom(e, parentAlias)}${proj.joins.join('')} where ${where.join(' and ')}${groupSql(proj)}${order}${page}`;
  return { sql, names: proj.names };
}

/** `exists (...)`: the embed has at least one row for the parent row (its own filters applied). */
function embedExists(ctx: CompileContext, table: TableMeta, item: EmbedItem, alias: string): string {
  const e = embedOf(ctx, table, item);
  const inner = [joinCondition(e, alias), ...nodeWhere(ctx, e.table, item.node, e.alias)];
  return `exists (select 1 from ${embedFrom(e, alias)} where ${inner.join(' and ')})`;
}

/** `author=not.is.null` / `author=is.null` on an embed (not a column): the parent has / lacks embedded rows. */
function embedNullFilter(ctx: CompileContext, table: TableMeta, node: ReadNode, alias: string, f: Filter): string | null {
  if (f.type !== 'cond' || f.op !== 'is' || f.value !== 'null' || table.columns.has(f.column)) return null;
  const item = node.select?.find((i): i is EmbedItem => i.type === 'embed' && embedName(i) === f.column);
  if (!item) return null;
  const exists = embedExists(ctx, table, item, alias);
  return f.negate ? exists : `not ${exists}`;
}

/** A node's own filters, plus `exists (...)` for each `!inner` embed (with that embed's filters). */
export function nodeWhere(ctx: CompileContext, table: TableMeta, node: ReadNode, alias: string): string[] {
  const where = node.filters.map((f) => embedNullFilter(ctx, table, node, alias, f) ?? filterSql(table, f, ctx.p, alias));
  for (const item of node.select ?? []) {
    if (item.type === 'embed' && item.inner) where.push(embedExists(ctx, table, item, alias));
  }
  return where;
}

/** `order by ...`; `relation(column)` keys read a to-one embed's column with a scalar subquery. */
export function orderSql(ctx: CompileContext, table: TableMeta, node: ReadNode, alias: string): string {
  if (!node.order.length) return '';
  return ` order by ${node.order.map((o) => orderTerm(orderExpr(ctx, table, node, alias, o), o)).join(', ')}`;
}

function orderExpr(ctx: CompileContext, table: TableMeta, node: ReadNode, alias: string, o: OrderKey): string {
  if (!o.relation) {
    const col = resolveReadable(table, o.column);
    return o.path?.length ? jsonPath(col, colExpr(table, alias, col), o.path, ctx.p).expr : colExpr(table, alias, col);
  }
  const item = node.select?.find((i): i is EmbedItem => i.type === 'embed' && embedName(i) === o.relation);
  if (!item) {
    throw new AppError('INVALID_QUERY', {
      message: `order=${safe(o.relation)}(${o.column}) needs "${safe(o.relation)}" embedded in select.`,
      nextActions: `Embed it, e.g. select=*,${safe(o.relation)}(*)&order=${safe(o.relation)}(${o.column}).asc.`,
    });
  }
  const e = embedOf(ctx, table, item);
  if (toMany(e.rel)) {
    throw new AppError('INVALID_QUERY', { message: `order=${o.relation}(...) works on a to-one relation only; "${o.relation}" is to-many.`, nextActions: `Order its rows inside the embed with ${o.relation}.order=${o.column}.asc.` });
  }
  const col = ref(e.alias, resolveColumn(e.table, o.column).name);
  return `(select ${col} from ${embedFrom(e, alias)} where ${joinCondition(e, alias)} limit 1)`;
}

/** The body of a read as text, built by Postgres from the projected rows `inner`, in the format asked for. */
function bodySql(format: BodyFormat, inner: string, names: string[], p: Params): string {
  switch (format) {
    case 'csv': // PostgREST's CSV: a header line, then each row's record text without its parentheses
      return `${p.add(names.join(','))}::text || chr(10) || coalesce((select string_agg(substring(r::text, 2, length(r::text) - 2), chr(10)) from (${inner}) r), '')`;
    case 'stripped':
      return `coalesce((select json_agg(json_strip_nulls(to_json(r.*))) from (${inner}) r), '[]')::text`;
    case 'geojson': // only asked for where PostGIS is installed (records.ts checks)
      return `json_build_object('type', 'FeatureCollection', 'features', coalesce((select json_agg(st_asgeojson(r.*)::json) from (${inner}) r), '[]'::json))::text`;
    default:
      return `coalesce((select json_agg(r.*) from (${inner}) r), '[]')::text`;
  }
}

/** Where a read takes its rows from: a table (default), or a CTE such as a function's result. */
export interface ReadSource {
  /** `name as materialized (...)`, put before the page CTE. */
  cte: string;
  /** The CTE's name, read as `from <name> t0`. */
  from: string;
}

/**
 * A read as ONE statement: the page of matching rows (filters, `!inner` embeds, order, limit),
 * then each row's projection with its embedded relations as lateral JSON, and the total of
 * matching rows (a count of its own: cheaper than a window over every row when pages are small).
 * `defaultLimit` null: no limit unless the request gives one. `source`: rows from a CTE
 * (materialized, so a function is called once), not the table.
 */
export function compileRead(ctx: CompileContext, table: TableMeta, node: ReadNode, defaultLimit: number | null = 100, opts: { source?: ReadSource; format?: BodyFormat; count?: CountKind } = {}): Statement {
  const { p } = ctx;
  const { source } = opts;
  const where = nodeWhere(ctx, table, node, 't0');
  const whereText = where.length ? ` where ${where.join(' and ')}` : '';
  const whereParams = p.values.length;
  const order = orderSql(ctx, table, node, 't0');
  const from = `${source ? source.from : tableRef(table)} t0`;
  const limit = p.add(node.limit ?? defaultLimit);
  const offset = p.add(node.offset ?? 0);
  const proj = projection(ctx, table, node, 't0');
  if (proj.aggregated) {
    // Aggregates run over every matching row, grouped by the other selected columns; the page is of groups.
    const group = groupSql(proj);
    const text =
      `with ${source ? `${source.cte}, ` : ''}page as (select ${proj.cols.join(', ')} from ${from}${whereText}${group}${order} limit ${limit} offset ${offset}) ` +
      `select ${bodySql(opts.format ?? 'json', 'select * from page', proj.names, p)} as body, (select count(*) from (select 1 from ${from}${whereText}${group}) g) as total`;
    return { text, values: p.values };
  }
  // The outer query orders the page again by the same keys (they name t0's columns, which the page keeps).
  const kind = opts.count ?? 'exact';
  const text =
    `with ${source ? `${source.cte}, ` : ''}page as (select t0.* from ${from}${whereText}${order} limit ${limit} offset ${offset}) ` +
    `select ${bodySql(opts.format ?? 'json', `select ${proj.cols.join(', ')} from page t0${proj.joins.join('')}${order}`, proj.names, p)} as body, ` +
    totals(kind, `${from}${whereText}`);
  if (kind === 'exact') return { text, values: p.values };
  // Only the filters' parameters ($1..$whereParams) appear in the estimated statement.
  const estimate = { text: `${source ? `with ${source.cte} ` : ''}select 1 from ${from}${whereText}`, values: p.values.slice(0, whereParams) };
  return { text, values: p.values, estimate };
}

/** The `total` of a read; planned and estimated also count the page's own rows (`rows`), since the total may be an estimate. */
function totals(kind: CountKind, rows: string): string {
  if (kind === 'exact') return `(select count(*) from ${rows}) as total`;
  const own = '(select count(*) from page) as rows';
  return kind === 'planned' ? `null::bigint as total, ${own}` : `(select count(*) from (select 1 from ${rows} limit ${ESTIMATE_FROM + 1}) c) as total, ${own}`;
}

/** The rows a write returned (CTE `w`), projected like a read (columns, casts, embeds) as JSON text, with their count. */
export function compileReturning(ctx: CompileContext, table: TableMeta, node: ReadNode, write: string, countInserted = false): Statement {
  const proj = projection(ctx, table, node, 't0');
  // An upsert also counts the rows it inserted (xmax is 0 on a new row version): 201 vs 200.
  const returning = countInserted ? `returning *, (xmax::text = '0') as plinth_inserted` : 'returning *';
  const inserted = countInserted ? `, (select count(*) from w where w.plinth_inserted) as inserted` : '';
  const text = `with w as (${write} ${returning}) select coalesce(json_agg(r.*), '[]')::text as body, count(*) as total${inserted} from (select ${proj.cols.join(', ')} from w t0${proj.joins.join('')}) r`;
  return { text, values: ctx.p.values };
}
