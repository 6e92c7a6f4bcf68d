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
  /** A base table's key repeated for a view that shows its columns: `table` (or `refTable`) is that view. */
  tableIsView?: boolean;
  refIsView?: boolean;
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
  junction?: { table: string; toParent: string[]; toChild: string[]; parentConstraint: string };
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
function viewKeys(
  fks: ForeignKeyInfo[],
  views: Array<{ view: string; base: string; columns: string[] }>,
): ForeignKeyInfo[] {
  const out: ForeignKeyInfo[] = [];
  for (const v of views) {
    const has = (cols: string[]) => cols.every((c) => v.columns.includes(c));
    for (const fk of fks) {
      if (fk.table === v.base && has(fk.columns)) out.push({ ...fk, table: v.view, unique: false, tableIsView: true });
      if (fk.refTable === v.base && has(fk.refColumns)) out.push({ ...fk, refTable: v.view, refIsView: true });
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
      const fks = Promise.all([
        this.db.query<ForeignKeyInfo>(FK_SQL, [this.schema.name]),
        this.db.query<{ view: string; base: string; columns: string[] }>(VIEW_SQL, [this.schema.name]),
      ]).then(([r, v]) => {
        const base = r.rows.map((row) => ({ ...row, columns: parse(row.columns), refColumns: parse(row.refColumns) }));
        return [
          ...base,
          ...viewKeys(
            base,
            v.rows.map((row) => ({ ...row, columns: parse(row.columns) })),
          ),
        ];
      });
      fks.catch(() => {
        if (this.cached?.fks === fks) this.cached = null;
      });
      this.cached = { version, fks };
    }
    return this.cached.fks;
  }
}

/** `parent` ← junction → `name`: a table with a foreign key to each side (hint: the junction's name). */
function manyToMany(fks: ForeignKeyInfo[], parent: string, name: string): Relation[] {
  const out: Relation[] = [];
  for (const a of fks) {
    if (a.refTable !== parent || a.table === parent || a.table === name) continue;
    for (const b of fks) {
      if (b === a || b.table !== a.table || b.refTable !== name) continue;
      out.push({
        kind: 'many-to-many',
        constraint: b.name,
        table: name,
        parentColumns: a.refColumns,
        childColumns: b.refColumns,
        junction: { table: a.table, toParent: a.columns, toChild: b.columns, parentConstraint: a.name },
      });
    }
  }
  return out;
}

/** One relationship seen from its origin, as PostgREST's schema cache holds it. */
interface Candidate {
  rel: Relation;
  /** The origin's and the foreign table's columns of the key, pairwise. */
  origin: string[];
  foreign: string[];
  /** A table's key to itself: both directions come from the one key. */
  self: boolean;
  /** The foreign side is a view (a base table's key repeated for it). */
  view: boolean;
}

/** Every relationship from `parent`: each key in both directions, and many-to-many through junctions. */
function candidates(fks: ForeignKeyInfo[], parent: string, name: string): Candidate[] {
  const out: Candidate[] = [];
  for (const fk of fks) {
    const self = fk.table === fk.refTable;
    if (fk.table === parent) {
      const rel: Relation = {
        kind: 'many-to-one',
        constraint: fk.name,
        table: fk.refTable,
        parentColumns: fk.columns,
        childColumns: fk.refColumns,
      };
      out.push({ rel, origin: fk.columns, foreign: fk.refColumns, self, view: fk.refIsView === true });
    }
    if (fk.refTable === parent) {
      const rel: Relation = {
        kind: fk.unique ? 'one-to-one' : 'one-to-many',
        constraint: fk.name,
        table: fk.table,
        parentColumns: fk.refColumns,
        childColumns: fk.columns,
      };
      out.push({ rel, origin: fk.refColumns, foreign: fk.columns, self, view: fk.tableIsView === true });
    }
  }
  for (const rel of manyToMany(fks, parent, name)) out.push({ rel, origin: [], foreign: [], self: false, view: false });
  return out;
}

const single = (cols: string[], name: string) => cols.length === 1 && cols[0] === name;

/**
 * PostgREST's choice among the relationships (its `findRel`): `name` is the foreign table, or
 * (tables only) a key's constraint or its single column on the origin side; a hint narrows to
 * a constraint, a key column of either side or a junction. A self reference gives the
 * referencing rows for the table's name (`collections(*)`, or `collections!parent_id(*)`) and
 * the referenced row for the key column (`parent_id(*)`).
 */
function matches(c: Candidate, name: string, hint: string | null): boolean {
  const { rel } = c;
  const isO2M = rel.kind === 'one-to-many';
  if (c.self) {
    if (hint === null) return (rel.table === name && isO2M) || (rel.kind === 'many-to-one' && single(c.origin, name));
    return rel.table === name && isO2M && (single(c.foreign, hint) || rel.constraint === hint);
  }
  if (hint === null) {
    if (rel.table === name) return true;
    return !rel.junction && !c.view && (rel.constraint === name || single(c.origin, name));
  }
  if (rel.table !== name) return false;
  if (rel.junction) return rel.junction.table === hint;
  return rel.constraint === hint || single(c.origin, hint) || single(c.foreign, hint);
}

const cols = (c: string[]) => `(${c.join(', ')})`;

/** PostgREST's description of a candidate in the `details` of PGRST201. */
function described(parent: string, c: Candidate): Record<string, string> {
  const { rel } = c;
  const embedding = `${parent} with ${rel.table}`;
  if (rel.junction) {
    const j = rel.junction;
    return {
      cardinality: 'many-to-many',
      embedding,
      relationship: `${j.table} using ${j.parentConstraint}${cols(j.toParent)} and ${rel.constraint}${cols(j.toChild)}`,
    };
  }
  return {
    cardinality: rel.kind,
    embedding,
    relationship: `${rel.constraint} using ${parent}${cols(c.origin)} and ${rel.table}${cols(c.foreign)}`,
  };
}

/**
 * The relation `name` (a table, or a foreign key column or constraint of `parent`) seen from
 * `parent`, narrowed by `hint` (a constraint or column name). None: 400 PGRST200; more than
 * one: 300 PGRST201 listing them (PostgREST's message, details and hint).
 */
export function resolveRelation(
  fks: ForeignKeyInfo[],
  parent: string,
  name: string,
  hint: string | null,
  schema = 'public',
): Relation {
  const found = candidates(fks, parent, name).filter((c) => matches(c, name, hint));
  if (found.length === 1) return found[0]!.rel;
  if (!found.length) {
    throw new AppError('RELATION_NOT_FOUND', {
      message: `Could not find a relationship between '${parent}' and '${safe(name)}' in the schema cache`,
      details: `Searched for a foreign key relationship between '${parent}' and '${safe(name)}'${hint ? ` using the hint '${safe(hint)}'` : ''} in the schema '${schema}', but no matches were found.`,
    });
  }
  throw new AppError('AMBIGUOUS_RELATION', {
    message: `Could not embed because more than one relationship was found for '${parent}' and '${safe(name)}'`,
    details: found.map((c) => described(parent, c)),
    hint: `Try changing '${safe(name)}' to one of the following: ${found.map((c) => `'${c.rel.table}!${c.rel.junction ? c.rel.junction.table : c.rel.constraint}'`).join(', ')}. Find the desired relationship in the 'details' key.`,
  });
}
