import { AppError } from '../errors/index.js';
import { embedName, type EmbedItem, type Filter, type OrderKey, type ReadNode } from './ast.js';
import { colExpr, filterSql, jsonPath, orderTerm, ref, resolveColumn, resolveReadable } from './filters.js';
import { quoteIdent, safe, tableRef } from './ident.js';
import { toMany } from './relations.js';
import type { TableMeta } from './schema.js';
import { bodySql, type BodyFormat } from './media.js';
import { type Add, addGroupedSpread, aggregateExpr, aggregates, columnExpr } from './grouped.js';
import { type CompileContext, type Embed, embedFrom, embedOf, joinCondition } from './embed.js';

export { type CompileContext, newContext } from './embed.js';

/** One parameterised statement. */
export interface Statement {
  text: string;
  values: unknown[];
  /** `count=planned|estimated`: the statement whose planner estimate is the total (EXPLAIN it as the caller). */
  estimate?: Statement;
}

/** `Prefer: count=`: exact (a count), planned (the planner's estimate), estimated (exact up to ESTIMATE_FROM rows, planned past it). */
export type CountKind = 'exact' | 'planned' | 'estimated';
/** What a read counts: a `Prefer: count=` kind, or `none` (no total: PostgREST's `Content-Range: 0-19/*` without `Prefer: count`). */
export type ReadCount = CountKind | 'none';
/** `count=estimated` counts exactly up to this many rows (the largest page, PostgREST's db-max-rows). */
export const ESTIMATE_FROM = 1000;

interface Projection {
  cols: string[];
  names: string[];
  joins: string[];
  /** With an aggregate: the other selected expressions, grouped by. */
  groupBy: string[];
  aggregated: boolean;
}

/** An embed as a lateral join: a JSON object (to-one) or array (to-many), or with `...` its columns in the parent row. */
function addEmbed(
  ctx: CompileContext,
  table: TableMeta,
  item: EmbedItem,
  alias: string,
  joins: string[],
  add: Add,
): void {
  const e = embedOf(ctx, table, item);
  const child = childQuery(ctx, e, alias);
  const ev = `e${e.alias}`;
  const toOne = !toMany(e.rel);
  if (item.spread) {
    const many = child.names
      .map((n) => `coalesce(json_agg(x.${quoteIdent(n)}), '[]'::json) as ${quoteIdent(n)}`)
      .join(', ');
    joins.push(
      toOne
        ? ` left join lateral (select * from (${child.sql}) x limit 1) ${ev} on true`
        : ` left join lateral (select ${many} from (${child.sql}) x) ${ev} on true`,
    );
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
  const embedded = new Set<string>();
  let spreads = 0;
  const aggregated = aggregates(node, table);
  const add: Add = (expr, name, strict) => {
    const at = names.indexOf(name);
    if (at >= 0) {
      if (!strict) return;
      // An embed named like a column of `*` (select=*,author_id(name)) takes its place, as in PostgREST.
      if (embeds.has(name))
        throw new AppError('INVALID_QUERY', {
          message: `Two embedded relations or spread columns of select are named "${name}".`,
          nextActions: `Give one of them an alias, e.g. select=*,${name}2:${name}(*).`,
        });
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
      add(item.cast ? `(count(*))::${item.cast}` : 'count(*)', item.alias ?? 'count', false);
    } else if (item.type === 'column') {
      const { expr, name } = columnExpr(ctx, table, item, alias);
      add(expr, name, false);
      groupBy.push(expr);
    } else if (item.type === 'aggregate') {
      const { expr, name } = aggregateExpr(ctx, table, item, alias);
      add(expr, name, false);
    } else if (aggregated && item.spread) {
      const before = joins.length;
      addGroupedSpread(ctx, table, item, alias, { joins, add, groupBy, where: nodeWhere });
      spreads += joins.length - before;
    } else if (!item.empty) {
      if (!item.spread) embedOnce(ctx, table, embedded, embedName(item));
      addEmbed(ctx, table, item, alias, joins, add);
    }
  }
  if (aggregated && joins.length > spreads) {
    throw new AppError('INVALID_QUERY', {
      message: 'Aggregates (count(), sum(), ...) cannot be combined with embedded relations at the same level.',
      nextActions: 'Aggregate inside the embed instead, e.g. select=name,posts(count()).',
    });
  }
  return { cols, names, joins, groupBy: aggregated ? groupBy : [], aggregated };
}

/**
 * Two embeds of one name at one level: PostgREST names each embed's join
 * `<table>_<name>_<depth>`, and Postgres refuses the second with 42712; so does Plinth, in its words.
 */
function embedOnce(ctx: CompileContext, table: TableMeta, seen: Set<string>, name: string): void {
  if (!seen.has(name)) {
    seen.add(name);
    return;
  }
  throw new AppError('INVALID_QUERY', {
    message: `table name "${safe(`${table.name}_${name}_${ctx.depth + 1}`, 200)}" specified more than once`,
    nextActions: `Give one of them an alias, e.g. select=${name}2:${name}(*).`,
    pgrstCode: '42712',
  });
}

const groupSql = (proj: Projection) =>
  proj.aggregated && proj.groupBy.length ? ` group by ${proj.groupBy.join(', ')}` : '';

/** The rows of an embedded relation for one parent row: its projection, join, filters, grouping, order and page. */
function childQuery(ctx: CompileContext, e: Embed, parentAlias: string): { sql: string; names: string[] } {
  const depth = ++ctx.depth;
  try {
    const proj = projection(ctx, e.table, e.item.node, e.alias);
    const where = [joinCondition(e, parentAlias), ...nodeWhere(ctx, e.table, e.item.node, e.alias)];
    const node = e.item.node;
    const order = orderSql(ctx, e.table, node, e.alias);
    const page = `${node.limit !== null ? ` limit ${ctx.p.add(node.limit)}` : ''}${node.offset !== null ? ` offset ${ctx.p.add(node.offset)}` : ''}`;
    const sql = `select ${proj.cols.join(', ')} from ${embedFrom(e, parentAlias)}${proj.joins.join('')} where ${where.join(' and ')}${groupSql(proj)}${order}${page}`;
    return { sql, names: proj.names };
  } catch (err) {
    throw embeddedColumn(err, e.table.name, depth);
  } finally {
    ctx.depth--;
  }
}

/**
 * A missing column of an embedded table, named as Postgres names it under PostgREST, which
 * aliases the table `<table>_<depth>` (`column messages_1.sum does not exist`).
 */
function embeddedColumn(err: unknown, table: string, depth: number): unknown {
  const prefix = `column ${table}.`;
  if (!(err instanceof AppError) || err.code !== 'UNKNOWN_COLUMN' || !err.message.startsWith(prefix)) return err;
  return new AppError('UNKNOWN_COLUMN', {
    message: `column ${table}_${depth}.${err.message.slice(prefix.length)}`,
    pgrstCode: '42703',
    cause: err,
  });
}

/** `exists (...)`: the embed has at least one row for the parent row (its own filters applied). */
function embedExists(ctx: CompileContext, table: TableMeta, item: EmbedItem, alias: string): string {
  const e = embedOf(ctx, table, item);
  const inner = [joinCondition(e, alias), ...nodeWhere(ctx, e.table, item.node, e.alias)];
  return `exists (select 1 from ${embedFrom(e, alias)} where ${inner.join(' and ')})`;
}

/** `author=not.is.null` / `author=is.null` on an embed (not a column): the parent has / lacks embedded rows. */
function embedNullFilter(
  ctx: CompileContext,
  table: TableMeta,
  node: ReadNode,
  alias: string,
  f: Filter,
): string | null {
  if (f.type !== 'cond' || f.op !== 'is' || f.value !== 'null' || table.columns.has(f.column)) return null;
  const item = node.select?.find((i): i is EmbedItem => i.type === 'embed' && embedName(i) === f.column);
  if (!item) return null;
  const exists = embedExists(ctx, table, item, alias);
  return f.negate ? exists : `not ${exists}`;
}

/** A node's own filters, plus `exists (...)` for each `!inner` embed (with that embed's filters). */
export function nodeWhere(ctx: CompileContext, table: TableMeta, node: ReadNode, alias: string): string[] {
  const where = node.filters.map(
    (f) => embedNullFilter(ctx, table, node, alias, f) ?? filterSql(table, f, ctx.p, alias),
  );
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
    throw new AppError('INVALID_QUERY', {
      message: `order=${o.relation}(...) works on a to-one relation only; "${o.relation}" is to-many.`,
      nextActions: `Order its rows inside the embed with ${o.relation}.order=${o.column}.asc.`,
    });
  }
  const col = ref(e.alias, resolveColumn(e.table, o.column).name);
  return `(select ${col} from ${embedFrom(e, alias)} where ${joinCondition(e, alias)} limit 1)`;
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
export function compileRead(
  ctx: CompileContext,
  table: TableMeta,
  node: ReadNode,
  defaultLimit: number | null = 100,
  opts: { source?: ReadSource; format?: BodyFormat; count?: ReadCount } = {},
): Statement {
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
      `with ${source ? `${source.cte}, ` : ''}page as (select ${proj.cols.join(', ')} from ${from}${proj.joins.join('')}${whereText}${group}${order} limit ${limit} offset ${offset}) ` +
      `select ${bodySql(opts.format ?? 'json', 'select * from page', proj.names, p)} as body, (select count(*) from (select 1 from ${from}${proj.joins.join('')}${whereText}${group}) g) as total`;
    return { text, values: p.values };
  }
  // The outer query orders the page again by the same keys (they name t0's columns, which the page keeps).
  const kind = opts.count ?? 'exact';
  const text =
    `with ${source ? `${source.cte}, ` : ''}page as (select t0.* from ${from}${whereText}${order} limit ${limit} offset ${offset}) ` +
    `select ${bodySql(opts.format ?? 'json', `select ${proj.cols.join(', ')} from page t0${proj.joins.join('')}${order}`, proj.names, p)} as body, ` +
    totals(kind, `${from}${whereText}`);
  if (kind === 'exact' || kind === 'none') return { text, values: p.values };
  // Only the filters' parameters ($1..$whereParams) appear in the estimated statement.
  const estimate = {
    text: `${source ? `with ${source.cte} ` : ''}select 1 from ${from}${whereText}`,
    values: p.values.slice(0, whereParams),
  };
  return { text, values: p.values, estimate };
}

/** The `total` of a read; planned and estimated also count the page's own rows (`rows`), since the total may be an estimate. */
function totals(kind: ReadCount, rows: string): string {
  if (kind === 'exact') return `(select count(*) from ${rows}) as total`;
  const own = '(select count(*) from page) as rows';
  return kind === 'planned' || kind === 'none'
    ? `null::bigint as total, ${own}`
    : `(select count(*) from (select 1 from ${rows} limit ${ESTIMATE_FROM + 1}) c) as total, ${own}`;
}

/** The rows a write returned (CTE `w`), projected like a read (columns, casts, embeds) as JSON text, with their count. */
export function compileReturning(
  ctx: CompileContext,
  table: TableMeta,
  node: ReadNode,
  write: string,
  countInserted = false,
): Statement {
  const proj = projection(ctx, table, node, 't0');
  // An upsert also counts the rows it inserted (xmax is 0 on a new row version): 201 vs 200.
  const returning = countInserted ? `returning *, (xmax::text = '0') as plinth_inserted` : 'returning *';
  const inserted = countInserted ? `, (select count(*) from w where w.plinth_inserted) as inserted` : '';
  const text = `with w as (${write} ${returning}) select coalesce(json_agg(r.*), '[]')::text as body, count(*) as total${inserted} from (select ${proj.cols.join(', ')} from w t0${proj.joins.join('')}) r`;
  return { text, values: ctx.p.values };
}
