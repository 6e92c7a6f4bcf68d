// Embedded relations as the compiler sees them: which relation and table an embed names, and
// how its rows are read and joined to the parent row's.
import { AppError } from '../errors/index.js';
import type { EmbedItem } from './ast.js';
import { Params, ref } from './filters.js';
import { quoteIdent, safe, schemaRef, tableRef } from './ident.js';
import { type ForeignKeyInfo, type Relation, resolveRelation } from './relations.js';
import type { TableMeta } from './schema.js';

/** What compiling needs: the tables and foreign keys of schema public, and the parameters. */
export interface CompileContext {
  tables: Map<string, TableMeta>;
  fks: ForeignKeyInfo[];
  p: Params;
  /** Counter for table aliases (t1, t2, ...) of embedded relations. */
  n: number;
  /** The exposed schema of the request (PostgREST names it in relationship errors). */
  schema: string;
  /** How deep the node being compiled is embedded (0: the table of the request). */
  depth: number;
}

export function newContext(
  tables: Map<string, TableMeta>,
  fks: ForeignKeyInfo[],
  p = new Params(),
  schema = 'public',
): CompileContext {
  return { tables, fks, p, n: 0, schema, depth: 0 };
}

export interface Embed {
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
export function embedOf(ctx: CompileContext, parent: TableMeta, item: EmbedItem): Embed {
  const computed = parent.relFunctions?.get(item.relation);
  let rel: Relation;
  try {
    rel = resolveRelation(ctx.fks, parent.name, item.relation, item.hint, ctx.schema);
  } catch (err) {
    if (!computed || !(err instanceof AppError) || err.code !== 'RELATION_NOT_FOUND') throw err;
    rel = {
      kind: computed.many ? 'one-to-many' : 'many-to-one',
      constraint: item.relation,
      table: computed.table,
      parentColumns: [],
      childColumns: [],
      fn: item.relation,
    };
  }
  const table = ctx.tables.get(rel.table);
  if (!table) throw new AppError('TABLE_NOT_FOUND', { message: `No table "${safe(rel.table)}".` });
  return { item, rel, table, parent, alias: `t${++ctx.n}` };
}

/** `<table> tN`, or `<fn>(<parent row>) tN` for a computed relationship. */
export function embedFrom(e: Embed, parentAlias: string): string {
  if (!e.rel.fn) return `${tableRef(e.table)} ${e.alias}`;
  return `${schemaRef(e.parent.schema)}.${quoteIdent(e.rel.fn)}(${parentAlias}::${tableRef(e.parent)}) ${e.alias}`;
}

/** How an embedded row joins its parent row (a junction row for many-to-many). */
export function joinCondition(e: Embed, parentAlias: string): string {
  if (e.rel.fn) return 'true';
  const j = e.rel.junction;
  if (j) {
    // many-to-many: a junction row links the parent row and the embedded row.
    const ja = `${e.alias}j`;
    const toParent = j.toParent.map((c, i) => `${ref(ja, c)} = ${ref(parentAlias, e.rel.parentColumns[i]!)}`);
    const toChild = j.toChild.map((c, i) => `${ref(ja, c)} = ${ref(e.alias, e.rel.childColumns[i]!)}`);
    return `exists (select 1 from ${tableRef({ name: j.table, schema: e.table.schema })} ${ja} where ${[...toParent, ...toChild].join(' and ')})`;
  }
  return e.rel.childColumns
    .map((c, i) => `${ref(e.alias, c)} = ${ref(parentAlias, e.rel.parentColumns[i]!)}`)
    .join(' and ');
}
