import { AppError } from '../errors/index.js';
import type { Condition, Filter, JsonStep, OrderKey } from './ast.js';
import { quoteIdent, safe, schemaRef, tableRef } from './ident.js';
import type { ColumnMeta, TableMeta } from './schema.js';
import { cast, toParam } from './types.js';

/** Collects bind parameters; `typed` gives the typed placeholder of a value for a column. */
export class Params {
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
    throw new AppError('UNKNOWN_COLUMN', {
      message: `column ${table.name}.${safe(name)} does not exist`,
      pgrstCode: '42703',
    });
  }
  return col;
}

/** A column or computed field a read may name (filters, select, order); writes use `resolveColumn`. */
export function resolveReadable(table: TableMeta, name: string): ColumnMeta {
  return table.columns.get(name) ?? table.computed?.get(name) ?? resolveColumn(table, name);
}

/** The expression of a column for a row `alias`: `alias."col"`, or `public."fn"(alias::public."table")` for a computed field. */
export function colExpr(table: TableMeta, alias: string | null, col: ColumnMeta): string {
  if (!col.computed) return ref(alias, col.name);
  return `${schemaRef(table.schema)}.${quoteIdent(col.name)}(${alias ?? tableRef(table)}::${tableRef(table)})`;
}

/** `alias."col"`, or `"col"` without an alias. */
export function ref(alias: string | null, column: string): string {
  return alias ? `${alias}.${quoteIdent(column)}` : quoteIdent(column);
}

const COMPARE: Record<string, string> = {
  eq: '=',
  neq: '<>',
  gt: '>',
  gte: '>=',
  lt: '<',
  lte: '<=',
  isdistinct: 'is distinct from',
};
const PATTERN: Record<string, string> = { like: 'like', ilike: 'ilike', match: '~', imatch: '~*' };
const CONTAIN: Record<string, string> = {
  cs: '@>',
  cd: '<@',
  ov: '&&',
  sl: '<<',
  sr: '>>',
  nxl: '&>',
  nxr: '&<',
  adj: '-|-',
};
const TSQUERY: Record<string, string> = {
  fts: 'to_tsquery',
  plfts: 'plainto_tsquery',
  phfts: 'phraseto_tsquery',
  wfts: 'websearch_to_tsquery',
};

/** A pattern operator's value as bound: like/ilike take `*` for `%` (no percent-encoding needed). */
export function patternValue(op: string, v: string): string {
  return op === 'like' || op === 'ilike' ? v.replace(/\*/g, '%') : v;
}

/**
 * `col->a->>b`: the JSON path expression and the column it acts as: text after `->>`, jsonb
 * after `->` (a json column is read as jsonb so = and the containment operators apply).
 */
export function jsonPath(col: ColumnMeta, base: string, path: JsonStep[], p: Params): { expr: string; as: ColumnMeta } {
  if (col.kind !== 'json') {
    throw new AppError('INVALID_QUERY', {
      message: `"${col.name}" is not a json or jsonb column, so it has no JSON path.`,
    });
  }
  let expr = col.typname === 'json' ? `${base}::jsonb` : base;
  for (const step of path) {
    const key = /^\d+$/.test(step.key) ? `${p.add(step.key)}::int` : `${p.add(step.key)}::text`;
    expr = `(${expr}${step.text ? '->>' : '->'}${key})`;
  }
  const text = path[path.length - 1]?.text ?? false;
  return {
    expr,
    as: { ...col, typname: text ? 'text' : 'jsonb', kind: text ? 'text' : 'json', castType: text ? 'text' : 'jsonb' },
  };
}

function condition(table: TableMeta, c: Condition, p: Params, alias: string | null): string {
  let col = resolveReadable(table, c.column);
  let r = colExpr(table, alias, col);
  if (c.path?.length) ({ expr: r, as: col } = jsonPath(col, r, c.path, p));
  const asText = col.kind === 'text' ? r : `${r}::text`;
  let sql: string;
  if (c.quantifier) {
    const list = c.value as string[];
    const q = c.quantifier;
    sql = PATTERN[c.op]
      ? `${asText} ${PATTERN[c.op]} ${q}(array[${list.map((v) => `${p.add(patternValue(c.op, v))}::text`).join(', ') || 'null::text'}])`
      : `${r} ${COMPARE[c.op]} ${q}(array[${list.map((v) => p.typed(col, v, 'query')).join(', ')}]${list.length ? '' : `::${col.castType}[]`})`;
  } else if (c.op === 'in') {
    const list = c.value as string[];
    sql = list.length ? `${r} in (${list.map((v) => p.typed(col, v, 'query')).join(', ')})` : 'false';
  } else if (c.op === 'is') {
    if (c.value !== 'null' && col.kind !== 'boolean') {
      throw new AppError('INVALID_VALUE', { message: `"is.${c.value}" needs a boolean column; "${col.name}" is not.` });
    }
    sql = `${r} is ${c.value}`;
  } else if (PATTERN[c.op]) {
    sql = `${asText} ${PATTERN[c.op]} ${p.add(patternValue(c.op, String(c.value)))}`;
  } else if (TSQUERY[c.op]) {
    const config = c.config ? `${p.add(c.config)}::regconfig, ` : '';
    const doc = col.typname === 'tsvector' ? r : `to_tsvector(${config}${asText})`;
    sql = `${doc} @@ ${TSQUERY[c.op]}(${config}${p.add(String(c.value))})`;
  } else if (CONTAIN[c.op]) {
    sql = `${r} ${CONTAIN[c.op]} ${p.typed(col, c.value, 'query')}`;
  } else {
    sql = `${r} ${COMPARE[c.op]} ${p.typed(col, c.value, 'query')}`;
  }
  return c.negate ? `not (${sql})` : sql;
}

export function filterSql(table: TableMeta, f: Filter, p: Params, alias: string | null = null): string {
  if (f.type === 'cond') return condition(table, f, p, alias);
  const inner = f.items.map((i) => filterSql(table, i, p, alias)).join(f.type === 'and' ? ' and ' : ' or ');
  return f.negate ? `not (${inner})` : `(${inner})`;
}

export function whereSql(table: TableMeta, filters: Filter[], p: Params, alias: string | null = null): string {
  return filters.length ? ` where ${filters.map((f) => filterSql(table, f, p, alias)).join(' and ')}` : '';
}

/** One order key (direction and nulls) after its expression. */
export function orderTerm(expr: string, o: OrderKey): string {
  return `${expr} ${o.dir}${o.nulls ? ` nulls ${o.nulls}` : ''}`;
}
