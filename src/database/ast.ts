/**
 * The parsed form of a records request (PostgREST grammar): what to select (columns, casts,
 * embedded relations), which rows (filters), in which order and which page. `grammar.ts` and
 * `query.ts` build it from the query string, `compile.ts` turns it into one SQL statement.
 */

/** Filter operators (PostgREST names). */
export const OPERATORS = [
  'eq',
  'neq',
  'gt',
  'gte',
  'lt',
  'lte',
  'like',
  'ilike',
  'match',
  'imatch',
  'in',
  'is',
  'isdistinct',
  'fts',
  'plfts',
  'phfts',
  'wfts',
  'cs',
  'cd',
  'ov',
  'sl',
  'sr',
  'nxl',
  'nxr',
  'adj',
] as const;
export type Operator = (typeof OPERATORS)[number];
export const IS_VALUES = ['null', 'true', 'false', 'unknown'] as const;

/** A filter on one column: `col=not.op.value`; `value` is a list for `in` and `like(any)`. */
export interface Condition {
  type: 'cond';
  column: string;
  op: Operator;
  negate: boolean;
  value: string | string[];
  /** `like(any)`, `eq(all)`, ...: the value is a `{a,b}` list matched with any/all. */
  quantifier?: 'any' | 'all';
  /** Text search configuration of `fts(english)`. */
  config?: string;
  /** `data->a->>b=eq.x`: JSON path steps on the column (`->>` last: compared as text, else as jsonb). */
  path?: JsonStep[];
}

/** One step of a JSON path: `->key` (json) or `->>key` (text, last only). */
export interface JsonStep {
  key: string;
  text: boolean;
}
/** A logic tree: `or=(...)`, `and=(...)`, nested `not.or(...)`. */
export interface Group {
  type: 'and' | 'or';
  negate: boolean;
  items: Filter[];
}
export type Filter = Condition | Group;

export interface OrderKey {
  column: string;
  /** `order=data->>key`: JSON path steps on the column. */
  path?: JsonStep[];
  dir: 'asc' | 'desc';
  nulls: 'first' | 'last' | null;
  /** `order=author(name)`: a column of a to-one embedded relation, by its alias or name. */
  relation?: string;
}

/** A selected column: `alias:col::cast`, or `col->a->>b` (a JSON path). */
export interface ColumnItem {
  type: 'column';
  name: string;
  alias: string | null;
  cast: string | null;
  /** JSON path steps; `text` marks `->>` (the last step only). */
  path: JsonStep[];
}
/** Aggregate functions of select (PostgREST 12). */
export const AGGREGATES = ['count', 'sum', 'avg', 'min', 'max'] as const;
export type AggregateFn = (typeof AGGREGATES)[number];

/** `alias:col.sum()::cast` or `count()`: an aggregate; the other selected columns are grouped by. */
export interface AggregateItem {
  type: 'aggregate';
  fn: AggregateFn;
  /** null: `count()` over rows. */
  column: ColumnItem | null;
  alias: string | null;
  /** Cast of the result (`.sum()::int`). */
  cast: string | null;
}

/** `*`: every column of the table. */
export interface StarItem {
  type: 'star';
}
/** `alias:relation!hint!inner(items)`: rows of a related table, nested in each row. */
export interface EmbedItem {
  type: 'embed';
  alias: string | null;
  relation: string;
  hint: string | null;
  inner: boolean;
  /** `...relation(cols)`: the embedded columns go into the parent row (arrays for to-many). */
  spread?: boolean;
  /** `relation()`: not in the output, only there to filter (with `!inner` or `relation=not.is.null`). */
  empty?: boolean;
  node: ReadNode;
}
export type SelectItem = ColumnItem | StarItem | EmbedItem | AggregateItem;

/** One level of a read: the top table or an embedded relation. */
export interface ReadNode {
  /** null: `*` (or no select). */
  select: SelectItem[] | null;
  /** ANDed together. */
  filters: Filter[];
  order: OrderKey[];
  limit: number | null;
  offset: number | null;
}

/** The AST of a records query string. */
export interface RecordsQuery extends ReadNode {
  onConflict: string[] | null;
  /** `columns=a,b`: the body keys an insert uses (others are ignored). */
  columns: string[] | null;
}

/** The name an embedded relation has in the output (and in `alias.col=` filters). */
export function embedName(e: EmbedItem): string {
  return e.alias ?? e.relation;
}
