import { AppError } from '../errors/index.js';
import type { Queryable } from '../db/types.js';
import { safe } from './ident.js';
import type { SchemaCache } from './schema.js';

/** A foreign key of schema public: `table(columns)` references `refTable(refColumns)`. */
export interface ForeignKeyInfo {
  name: string;
  table: string;
  columns: string[];
  refTable: string;
  refColumns: string[];
  /** The key columns are also unique in `table` (a primary key or unique constraint): one-to-one. */
  unique: boolean;
}

/**
 * How an embedded table joins its parent: the embedded rows are those whose `childColumns`
 * equal the parent's `parentColumns`. many-to-one embeds one object, one-to-many an array.
 */
export interface Relation {
  /** one-to-one: a one-to-many whose key is unique on the embedded side (an object, as PostgREST). */
  kind: 'many-to-one' | 'one-to-many' | 'one-to-one' | 'many-to-many';
  constraint: string;
  table: string;
  parentColumns: string[];
  childColumns: string[];
  /**
   * many-to-many: the junction table with a key to each side; `parentColumns`/`childColumns`
   * are then the parent's and child's referenced columns, `toParent`/`toChild` the junction's.
   */
  junction?: { table: string; toParent: string[]; toChild: string[] };
  /** A computed relationship: the embedded rows are `fn(parent row)`. */
  fn?: string;
}

/** Embeds an array (to-many) rather than one object. */
export function toMany(r: Relation): boolean {
  return r.kind === 'one-to-many' || r.kind === 'many-to-many';
}

// Every foreign key between tables of schema public, with its columns in key order.
const FK_SQL = `
select k.conname as name, c.relname as table, f.relname as "refTable",
  (select json_agg(a.attname order by x.n) from unnest(k.conkey) with ordinality x(attnum, n)
     join pg_attribute a on a.attrelid = k.conrelid and a.attnum = x.attnum) as columns,
  (select json_agg(a.attname order by x.n) from unnest(k.confkey) with ordinality x(attnum, n)
     join pg_attribute a on a.attrelid = k.confrelid and a.attnum = x.attnum) as "refColumns",
  exists (select 1 from pg_constraint u where u.conrelid = k.conrelid and u.contype in ('p', 'u')
          and u.conkey @> k.conkey and k.conkey @> u.conkey) as "unique"
from pg_constraint k
join pg_class c on c.oid = k.conrelid join pg_namespace cn on cn.oid = c.relnamespace and cn.nspname = $1
join pg_class f on f.oid = k.confrelid join pg_namespace fn on fn.oid = f.relnamespace and fn.nspname = $1
where k.contype = 'f'
order by k.conname`;

// The columns of views of schema public that are columns of a base table of schema public
// under the same name (simple views): embedding follows the base table's foreign keys.
const VIEW_SQL = `
select u.view_name as view, u.table_name as base, json_agg(u.column_name::text) as columns
from information_schema.view_column_usage u
join pg_class v on v.relname = u.view_name join pg_namespace vn on vn.oid = v.relnamespace and vn.nspname = $1
where u.view_schema = $1 and u.table_schema = $1
  and exists (select 1 from pg_attribute a where a.attrelid = v.oid and a.attname = u.column_name and not a.attisdropped)
group by u.view_name, u.table_name`;

/** The keys of base tables, repeated for each view that shows all of a key's columns. */
function viewKeys(fks: ForeignKeyInfo[], views: Array<{ view: string; base: string; columns: string[] }>): ForeignKeyInfo[] {
  const out: ForeignKeyInfo[] = [];
  for (const v of views) {
    const has = (cols: string[]) => cols.every((c) => v.columns.includes(c));
    for (const fk of fks) {
      if (fk.table === v.base && has(fk.columns)) out.push({ ...fk, table: v.view, unique: false });
      if (fk.refTable === v.base && has(fk.refColumns)) out.push({ ...fk, refTable: v.view });
    }
  }
  return out;
}

const parse = (v: unknown): string[] => (typeof v === 'string' ? JSON.parse(v) : (v as string[]));

/** The foreign keys of schema public, read from pg_catalog once per schema version. */
export class RelationsCache {
  private cached: { version: string; fks: Promise<ForeignKeyInfo[]> } | null = null;

  constructor(
    private readonly db: Queryable,
    private readonly schema: SchemaCache,
  ) {}

  async foreignKeys(): Promise<ForeignKeyInfo[]> {
    await this.schema.all();
    const version = this.schema.version;
    if (this.cached?.version !== version) {
      const fks = Promise.all([this.db.query<ForeignKeyInfo>(FK_SQL, [this.schema.name]), this.db.query<{ view: string; base: string; columns: string[] }>(VIEW_SQL, [this.schema.name])]).then(([r, v]) => {
        const base = r.rows.map((row) => ({ ...row, columns: parse(row.columns), refColumns: parse(row.refColumns) }));
        return [...base, ...viewKeys(base, v.rows.map((row) => ({ ...row, columns: parse(row.columns) })))];
      });
      fks.catch(() => {
        if (this.cached?.fks === fks) this.cached = null;
      });
      this.cached = { version, fks };
    }
    return this.cached.fks;
  }
}

function selfRef(r: Relation, parent: string): boolean {
  return r.table === parent;
}

function describe(parent: string, r: Relation): string {
  if (r.junction) return `many-to-many through "${r.junction.table}" (${parent}.${r.parentColumns.join(',')} = ${r.junction.table}.${r.junction.toParent.join(',')}, ${r.junction.table}.${r.junction.toChild.join(',')} = ${r.table}.${r.childColumns.join(',')})`;
  return `${r.kind} via "${r.constraint}" (${parent}.${r.parentColumns.join(',')} = ${r.table}.${r.childColumns.join(',')})`;
}

/** `parent` ← junction → `name`: a table with a foreign key to each side (hint: the junction's name). */
function manyToMany(fks: ForeignKeyInfo[], parent: string, name: string): Relation[] {
  const out: Relation[] = [];
  for (const a of fks) {
    if (a.refTable !== parent || a.table === parent || a.table === name) continue;
    for (const b of fks) {
      if (b === a || b.table !== a.table || b.refTable !== name) continue;
      out.push({
        kind: 'many-to-many', constraint: b.name, table: name, parentColumns: a.refColumns, childColumns: b.refColumns,
        junction: { table: a.table, toParent: a.columns, toChild: b.columns },
      });
    }
  }
  return out;
}

/**
 * The relation `name` (a table, or a foreign key column or constraint of `parent`) seen from
 * `parent`, narrowed by `hint` (a constraint or column name). None: 400 PGRST200; more than
 * one: 300 PGRST201 (as PostgREST) listing the hints that pick one.
 */
export function resolveRelation(fks: ForeignKeyInfo[], parent: string, name: string, hint: string | null): Relation {
  const found: Relation[] = [];
  for (const fk of fks) {
    const byKeyColumn = fk.table === parent && (fk.name === name || (fk.columns.length === 1 && fk.columns[0] === name));
    if ((fk.table === parent && fk.refTable === name) || byKeyColumn) {
      found.push({ kind: 'many-to-one', constraint: fk.name, table: fk.refTable, parentColumns: fk.columns, childColumns: fk.refColumns });
    }
    if (fk.refTable === parent && fk.table === name && !byKeyColumn) {
      found.push({ kind: fk.unique ? 'one-to-one' : 'one-to-many', constraint: fk.name, table: fk.table, parentColumns: fk.refColumns, childColumns: fk.columns });
    }
  }
  found.push(...manyToMany(fks, parent, name));
  const matches = hint
    ? found.filter((r) => r.constraint === hint || r.table === hint || r.junction?.table === hint || (r.kind === 'many-to-one' ? r.parentColumns : r.childColumns).includes(hint))
    : found;
  if (matches.length === 1) return matches[0]!;
  // A self reference is both directions of one key: `!<key column>` is the referenced row
  // (many-to-one), `!<constraint>` the referencing rows (one-to-many).
  if (hint && matches.length === 2 && matches[0]!.constraint === matches[1]!.constraint) {
    return matches.find((r) => (hint === r.constraint ? r.kind !== 'many-to-one' : r.kind === 'many-to-one'))!;
  }
  if (!matches.length) {
    throw new AppError('RELATION_NOT_FOUND', {
      message: `No relationship was found between "${parent}" and "${safe(name)}"${hint ? ` with the hint "${safe(hint)}"` : ''}.`,
      details: `Searched the foreign keys of schema public between "${parent}" and "${safe(name)}".`,
      hint: `Embedding needs a foreign key between the two tables (e.g. ${safe(name)}.${parent}_id references ${parent}(id)), or a hint that names one.`,
    });
  }
  throw new AppError('AMBIGUOUS_RELATION', {
    message: `More than one relationship was found for "${parent}" and "${safe(name)}".`,
    details: matches.map((r) => describe(parent, r)).join('; '),
    hint: `Try changing "${safe(name)}" to one of: ${matches.map((r) => `"${safe(name)}!${r.junction ? r.junction.table : selfRef(r, parent) && r.kind === 'many-to-one' ? r.parentColumns.join(',') : r.constraint}"`).join(', ')}.`,
  });
}
