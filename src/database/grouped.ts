// Selected expressions and aggregates, and the to-one spreads that group an aggregated node
// (PostgREST hoists a spread's columns into the parent's GROUP BY and its aggregates into the
// parent's aggregates).
import { AppError } from '../errors/index.js';
import { embedName, type AggregateItem, type ColumnItem, type EmbedItem, type ReadNode } from './ast.js';
import { colExpr, jsonPath, ref, resolveReadable } from './filters.js';
import { type CompileContext, embedFrom, embedOf, joinCondition } from './embed.js';
import { toMany } from './relations.js';
import type { TableMeta } from './schema.js';

/** Adds `expr as "name"` to a projection (`strict`: an embed, which may not share its name). */
export type Add = (expr: string, name: string, strict: boolean) => void;

/** Where a grouped spread puts its join, columns and groups; `where` reads a node's filters (compile's nodeWhere). */
export interface Grouped {
  joins: string[];
  add: Add;
  groupBy: string[];
  where: (ctx: CompileContext, table: TableMeta, node: ReadNode, alias: string) => string[];
}

/** A selected column (JSON path, cast, alias) of the row `alias`. */
export function columnExpr(
  ctx: CompileContext,
  table: TableMeta,
  item: ColumnItem,
  alias: string,
): { expr: string; name: string } {
  const col = resolveReadable(table, item.name);
  let expr = colExpr(table, alias, col);
  if (item.path.length) expr = jsonPath(col, expr, item.path, ctx.p).expr;
  if (item.cast) expr = `(${expr})::${item.cast}`;
  return { expr, name: item.alias ?? item.path[item.path.length - 1]?.key ?? col.name };
}

/** `fn(column)` or `count(*)`, cast and aliased. */
export function aggregateExpr(
  ctx: CompileContext,
  table: TableMeta,
  item: AggregateItem,
  alias: string,
): { expr: string; name: string } {
  const input = item.column ? columnExpr(ctx, table, item.column, alias).expr : '*';
  const expr = `${item.fn}(${input})`;
  return { expr: item.cast ? `(${expr})::${item.cast}` : expr, name: item.alias ?? item.fn };
}

/** Whether a node aggregates: an aggregate of its own, or in a spread embed (hoisted into it, as PostgREST). */
export function aggregates(node: ReadNode, table?: TableMeta): boolean {
  return (node.select ?? []).some(
    (i) =>
      i.type === 'aggregate' ||
      (i.type === 'column' &&
        i.name === 'count' &&
        !i.path.length &&
        table !== undefined &&
        !table.columns.has('count')) ||
      (i.type === 'embed' && i.spread === true && aggregates(i.node)),
  );
}

/**
 * A to-one spread in an aggregated node (`channels(count(), ...details(name))`): its row joins
 * the parent's, its columns group the aggregates and its aggregates run over the parent's
 * groups (PostgREST). A to-many spread cannot be grouped by: 400.
 */
export function addGroupedSpread(
  ctx: CompileContext,
  table: TableMeta,
  item: EmbedItem,
  alias: string,
  out: Grouped,
): void {
  const { joins, add, groupBy } = out;
  const e = embedOf(ctx, table, item);
  if (toMany(e.rel))
    throw new AppError('INVALID_QUERY', {
      message: `"${embedName(item)}" is to-many: only a to-one spread can be combined with aggregates.`,
      nextActions: 'Aggregate inside the to-many embed instead, e.g. select=name,posts(count()).',
    });
  const ev = `e${e.alias}`;
  const where = [joinCondition(e, alias), ...out.where(ctx, e.table, item.node, e.alias)];
  joins.push(
    ` left join lateral (select ${e.alias}.* from ${embedFrom(e, alias)} where ${where.join(' and ')} limit 1) ${ev} on true`,
  );
  for (const i of item.node.select ?? [{ type: 'star' as const }]) {
    if (i.type === 'star') {
      for (const c of e.table.columnList) {
        add(ref(ev, c.name), c.name, false);
        groupBy.push(ref(ev, c.name));
      }
    } else if (i.type === 'column') {
      const { expr, name } = columnExpr(ctx, e.table, i, ev);
      add(expr, name, false);
      groupBy.push(expr);
    } else if (i.type === 'aggregate') {
      const { expr, name } = aggregateExpr(ctx, e.table, i, ev);
      add(expr, name, false);
    } else if (i.spread) addGroupedSpread(ctx, e.table, i, ev, out);
    else
      throw new AppError('INVALID_QUERY', {
        message: 'Aggregates (count(), sum(), ...) cannot be combined with embedded relations at the same level.',
        nextActions: 'Aggregate inside the embed instead, e.g. select=name,posts(count()).',
      });
  }
}
