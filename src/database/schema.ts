import type { Queryable } from '../db/types.js';
import { apiType, valueKind, type Typed } from './types.js';

export interface ForeignKey {
  table: string;
  column: string;
  on_delete: string;
}

export interface ColumnMeta extends Typed {
  typname: string;
  /** The API type name (string, integer, ...), or the Postgres name for other types. */
  type: string;
  nullable: boolean;
  default: string | null;
  isPrimaryKey: boolean;
  unique: boolean;
  foreignKey: ForeignKey | null;
  /** A computed field: `public.<name>(row)`, not a stored column. */
  computed?: boolean;
  /** The sequence of a serial or identity column (`public.t_id_seq`). */
  sequence?: string | null;
}

export interface TableMeta {
  name: string;
  /** Base tables can be managed; views can only be queried. */
  isTable: boolean;
  rlsEnabled: boolean;
  /** The schema it lives in (absent: public). */
  schema?: string;
  /** Computed fields: functions of schema public taking this table's row type (read-only columns, not in `*`). */
  computed?: Map<string, ColumnMeta>;
  /** Computed relationships: functions of this row type returning rows of `table` (`many`: setof), embeddable by name. */
  relFunctions?: Map<string, { table: string; many: boolean }>;
  columns: Map<string, ColumnMeta>;
  /** In table order. */
  columnList: ColumnMeta[];
  primaryKey: string[];
}

const ON_DELETE_BY_CODE: Record<string, string> = {
  a: 'NO ACTION',
  r: 'RESTRICT',
  c: 'CASCADE',
  n: 'SET NULL',
  d: 'SET DEFAULT',
};

// Every relation of schema public with its columns, keys and defaults, in one round trip.
const LOAD_SQL = `
select c.relname as table, c.relkind in ('r','p') as is_table, c.relrowsecurity as rls,
  coalesce(json_agg(json_build_object(
    'name', a.attname,
    'typname', t.typname,
    'castType', format_type(a.atttypid, null),
    'nullable', not a.attnotnull,
    'default', pg_get_expr(d.adbin, d.adrelid),
    'sequence', case when c.relkind in ('r','p') then pg_get_serial_sequence(format('%I.%I', n.nspname, c.relname), a.attname) end,
    'pk', exists (select 1 from pg_constraint k where k.conrelid = c.oid and k.contype = 'p' and a.attnum = any(k.conkey)),
    'unique', exists (select 1 from pg_constraint k where k.conrelid = c.oid and k.contype in ('p','u')
                      and k.conkey = array[a.attnum]::int2[]),
    'fk', (select json_build_object('table', fc.relname, 'column', fa.attname, 'on_delete', k.confdeltype)
           from pg_constraint k
           join pg_class fc on fc.oid = k.confrelid
           join pg_attribute fa on fa.attrelid = k.confrelid and fa.attnum = k.confkey[1]
           where k.conrelid = c.oid and k.contype = 'f' and k.conkey = array[a.attnum]::int2[] limit 1)
  ) order by a.attnum) filter (where a.attnum is not null), '[]') as columns
from pg_class c
join pg_namespace n on n.oid = c.relnamespace and n.nspname = $1
left join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
left join pg_type t on t.oid = a.atttypid
left join pg_attrdef d on d.adrelid = c.oid and d.adnum = a.attnum
where c.relkind in ('r','p','v','m','f')
group by c.oid, c.relname, c.relkind, c.relrowsecurity`;

interface RawColumn {
  name: string;
  typname: string;
  castType: string;
  nullable: boolean;
  default: string | null;
  sequence: string | null;
  pk: boolean;
  unique: boolean;
  fk: { table: string; column: string; on_delete: string } | null;
}

// Functions of the schema with one argument, a row type of a relation of the schema:
// returning one value, a computed field; returning rows of a relation of the schema
// (`setof` or one; `setof … rows 1` is one), a computed relationship (PostgREST's names).
const COMPUTED_SQL = `
select c.relname as table, p.proname as name, t.typname, format_type(p.prorettype, null) as "castType", p.proretset as retset,
  p.proretset and p.prorows = 1 as "rowsOne",
  (select rc.relname from pg_class rc where rc.reltype = p.prorettype and rc.relnamespace = n.oid) as rettable
from pg_proc p join pg_namespace n on n.oid = p.pronamespace and n.nspname = $1
join pg_class c on c.reltype = p.proargtypes[0] join pg_namespace cn on cn.oid = c.relnamespace and cn.nspname = $1
join pg_type t on t.oid = p.prorettype
where p.pronargs = 1 and p.prokind = 'f' and t.typname <> 'void'`;

/** Adds each table's computed fields (a real column of the same name wins). */
async function loadComputed(db: Queryable, tables: Map<string, TableMeta>, schema: string): Promise<void> {
  const { rows } = await db.query<{
    table: string;
    name: string;
    typname: string;
    castType: string;
    retset: boolean;
    rowsOne: boolean;
    rettable: string | null;
  }>(COMPUTED_SQL, [schema]);
  for (const r of rows) {
    const t = tables.get(r.table);
    if (!t || t.columns.has(r.name)) continue;
    if (r.rettable) {
      // `setof … rows 1` embeds one object, as a function returning one row (PostgREST).
      (t.relFunctions ??= new Map()).set(r.name, { table: r.rettable, many: r.retset && !r.rowsOne });
      continue;
    }
    if (r.retset) continue;
    t.computed ??= new Map();
    t.computed.set(r.name, {
      name: r.name,
      typname: r.typname,
      kind: valueKind(r.typname),
      castType: r.castType,
      type: apiType(r.typname),
      nullable: true,
      default: null,
      isPrimaryKey: false,
      unique: false,
      foreignKey: null,
      computed: true,
    });
  }
}

/** Reads every relation of schema public from the catalog. */
export async function loadTables(db: Queryable, schema = 'public'): Promise<Map<string, TableMeta>> {
  const { rows } = await db.query<{ table: string; is_table: boolean; rls: boolean; columns: RawColumn[] | string }>(
    LOAD_SQL,
    [schema],
  );
  const tables = new Map<string, TableMeta>();
  for (const r of rows) {
    const raw: RawColumn[] = typeof r.columns === 'string' ? JSON.parse(r.columns) : r.columns;
    const columnList = raw.map(
      (c): ColumnMeta => ({
        name: c.name,
        typname: c.typname,
        kind: valueKind(c.typname),
        castType: c.castType,
        type: apiType(c.typname),
        nullable: c.nullable,
        default: c.default,
        sequence: c.sequence,
        isPrimaryKey: c.pk,
        unique: c.unique,
        foreignKey: c.fk
          ? { table: c.fk.table, column: c.fk.column, on_delete: ON_DELETE_BY_CODE[c.fk.on_delete] ?? c.fk.on_delete }
          : null,
      }),
    );
    tables.set(r.table, {
      name: r.table,
      schema,
      isTable: r.is_table,
      rlsEnabled: r.rls,
      columns: new Map(columnList.map((c) => [c.name, c])),
      columnList,
      primaryKey: columnList.filter((c) => c.isPrimaryKey).map((c) => c.name),
    });
  }
  await loadComputed(db, tables, schema);
  return tables;
}

/**
 * The tables of schema public, in memory. Refreshed after this instance's DDL; a miss
 * (another instance may have changed the schema) reloads at most once per `minReloadMs`.
 */
export class SchemaCache {
  private tables: Map<string, TableMeta> | null = null;
  private loading: Promise<Map<string, TableMeta>> | null = null;
  private loadedAt = 0;
  private generation = 0;

  constructor(
    private readonly db: Queryable,
    private readonly minReloadMs = 1000,
    /** The schema whose relations this caches. */
    readonly name = 'public',
  ) {}

  /** All relations (loads on first use). */
  async all(): Promise<Map<string, TableMeta>> {
    return this.tables ?? this.reload();
  }

  /** Reloads now (shares a reload already under way). */
  async reload(): Promise<Map<string, TableMeta>> {
    if (this.loading) return this.loading;
    const gen = this.generation;
    const p = loadTables(this.db, this.name)
      .then((t) => {
        // A load that started before an invalidate() must not install what it read.
        if (gen === this.generation) {
          this.tables = t;
          this.loadedAt = Date.now();
        }
        return t;
      })
      .finally(() => {
        if (this.loading === p) this.loading = null;
      });
    this.loading = p;
    return p;
  }

  /** The table, or null; on a miss reloads once unless it just did. */
  async get(name: string): Promise<TableMeta | null> {
    const t = (await this.all()).get(name);
    if (t) return t;
    if (!(await this.reloadOnMiss())) return null;
    return this.tables?.get(name) ?? null;
  }

  /** Reloads after a miss unless a reload happened within `minReloadMs`; says whether it did. */
  async reloadOnMiss(): Promise<boolean> {
    if (Date.now() - this.loadedAt < this.minReloadMs) return false;
    await this.reload();
    return true;
  }

  /** Changes whenever the cached schema does (caches derived from it key on this). */
  get version(): string {
    return `${this.generation}:${this.loadedAt}`;
  }

  /** Forgets everything; the next use reloads (after DDL on this instance). */
  invalidate(): void {
    this.tables = null;
    this.loadedAt = 0;
    this.loading = null;
    this.generation++;
  }
}
