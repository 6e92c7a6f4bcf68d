// `Database` types in Supabase's format (supabase gen types typescript), from the catalog of
// schema public: postgrest-js and supabase-js take them as their type parameter.
import type { Queryable } from '../db/types.js';

interface ColumnRow {
  rel: string;
  kind: string;
  col: string;
  typ: string;
  typtype: string;
  elem: string | null;
  elemtype: string | null;
  notnull: boolean;
  hasdef: boolean;
  ident: string;
  gen: string;
}
interface FkRow {
  name: string;
  rel: string;
  cols: string[];
  ref: string;
  refcols: string[];
  one: boolean;
}
interface FnRow {
  name: string;
  argnames: string[] | null;
  argtypes: string[];
  ret: string;
  retset: boolean;
  rettyptype: string;
}

const NUMBER = new Set(['int2', 'int4', 'int8', 'float4', 'float8', 'numeric', 'oid', 'money']);
const STRING = new Set([
  'text',
  'varchar',
  'bpchar',
  'char',
  'name',
  'uuid',
  'date',
  'time',
  'timetz',
  'timestamp',
  'timestamptz',
  'interval',
  'bytea',
  'inet',
  'cidr',
  'macaddr',
  'citext',
  'tsvector',
  'xml',
  'bit',
  'varbit',
]);

const COLUMNS = `
select c.relname as rel, c.relkind::text as kind, a.attname as col, t.typname as typ, t.typtype::text as typtype,
       e.typname as elem, e.typtype::text as elemtype, a.attnotnull as notnull, a.atthasdef as hasdef,
       a.attidentity::text as ident, a.attgenerated::text as gen
  from pg_attribute a
  join pg_class c on c.oid = a.attrelid
  join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public'
  join pg_type t on t.oid = a.atttypid
  left join pg_type e on e.oid = t.typelem and t.typcategory = 'A'
 where c.relkind in ('r', 'p', 'v', 'm') and a.attnum > 0 and not a.attisdropped
 order by c.relname, a.attnum`;

const FOREIGN_KEYS = `
select k.conname as name, c.relname as rel, r.relname as ref,
       array(select attname from unnest(k.conkey) with ordinality u(n, i) join pg_attribute on attrelid = k.conrelid and attnum = u.n order by u.i)::text[] as cols,
       array(select attname from unnest(k.confkey) with ordinality u(n, i) join pg_attribute on attrelid = k.confrelid and attnum = u.n order by u.i)::text[] as refcols,
       exists (select 1 from pg_constraint q where q.conrelid = k.conrelid and q.contype in ('p', 'u') and q.conkey::int2[] @> k.conkey::int2[] and q.conkey::int2[] <@ k.conkey::int2[]) as one
  from pg_constraint k
  join pg_class c on c.oid = k.conrelid
  join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public'
  join pg_class r on r.oid = k.confrelid
 where k.contype = 'f'
 order by c.relname, k.conname`;

const FUNCTIONS = `
select p.proname as name, p.proargnames::text[] as argnames,
       array(select t.typname from unnest(p.proargtypes::oid[]) with ordinality u(o, i) join pg_type t on t.oid = u.o order by u.i)::text[] as argtypes,
       rt.typname as ret, p.proretset as retset, rt.typtype::text as rettyptype
  from pg_proc p
  join pg_namespace n on n.oid = p.pronamespace and n.nspname = 'public'
  join pg_type rt on rt.oid = p.prorettype
 where p.prokind = 'f' and rt.typname not in ('trigger', 'event_trigger')
   and not exists (select 1 from pg_depend d where d.objid = p.oid and d.deptype = 'e')
 order by p.proname`;

const ENUMS = `
select t.typname as name, array_agg(e.enumlabel order by e.enumsortorder)::text[] as labels
  from pg_type t join pg_enum e on e.enumtypid = t.oid
  join pg_namespace n on n.oid = t.typnamespace and n.nspname = 'public'
 group by t.typname order by t.typname`;

const q = (s: string) => JSON.stringify(s);
/** A property key: bare when it is an identifier, quoted otherwise. */
const key = (s: string) => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(s) ? s : q(s));

function tsType(typ: string, typtype: string, enums: Set<string>): string {
  if (typtype === 'e' && enums.has(typ)) return `Database["public"]["Enums"][${q(typ)}]`;
  if (NUMBER.has(typ)) return 'number';
  if (STRING.has(typ)) return 'string';
  if (typ === 'bool') return 'boolean';
  if (typ === 'json' || typ === 'jsonb') return 'Json';
  if (typ === 'void') return 'undefined';
  return 'unknown';
}

function colType(c: ColumnRow, enums: Set<string>): string {
  return c.elem ? `${tsType(c.elem, c.elemtype ?? 'b', enums)}[]` : tsType(c.typ, c.typtype, enums);
}

/** Generates the `Database` type of schema public. */
export class TypeGenerator {
  constructor(private readonly db: Queryable) {}

  async typescript(): Promise<string> {
    const [cols, fks, fns, ens] = await Promise.all([
      this.db.query<ColumnRow>(COLUMNS),
      this.db.query<FkRow>(FOREIGN_KEYS),
      this.db.query<FnRow>(FUNCTIONS),
      this.db.query<{ name: string; labels: string[] }>(ENUMS),
    ]);
    const enums = new Set(ens.rows.map((e) => e.name));
    const rels = new Map<string, { kind: string; cols: ColumnRow[] }>();
    for (const c of cols.rows) {
      const r = rels.get(c.rel) ?? { kind: c.kind, cols: [] };
      r.cols.push(c);
      rels.set(c.rel, r);
    }
    const relationships = (rel: string) =>
      fks.rows
        .filter((f) => f.rel === rel)
        .map(
          (f) =>
            `          {\n            foreignKeyName: ${q(f.name)}\n            columns: [${f.cols.map(q).join(', ')}]\n            isOneToOne: ${f.one}\n            referencedRelation: ${q(f.ref)}\n            referencedColumns: [${f.refcols.map(q).join(', ')}]\n          },`,
        )
        .join('\n');
    const block = (name: string, body: string[]) => `      ${key(name)}: {\n${body.join('\n')}\n      }`;
    const fields = (cs: ColumnRow[], mode: 'row' | 'insert' | 'update') =>
      `        ${mode === 'row' ? 'Row' : mode === 'insert' ? 'Insert' : 'Update'}: {\n${cs
        .filter((c) => mode === 'row' || c.gen !== 's')
        .map((c) => {
          const t = colType(c, enums) + (c.notnull ? '' : ' | null');
          const optional = mode === 'update' || (mode === 'insert' && (!c.notnull || c.hasdef || c.ident !== ''));
          return `          ${key(c.col)}${optional ? '?' : ''}: ${t}`;
        })
        .join('\n')}\n        }`;
    const tables: string[] = [];
    const views: string[] = [];
    for (const [name, r] of rels) {
      const rel = `        Relationships: [\n${relationships(name)}\n        ]`;
      if (r.kind === 'r' || r.kind === 'p')
        tables.push(block(name, [fields(r.cols, 'row'), fields(r.cols, 'insert'), fields(r.cols, 'update'), rel]));
      else views.push(block(name, [fields(r.cols, 'row'), rel]));
    }
    const functions = fns.rows.map((f) => {
      const args = f.argtypes.map(
        (t, i) =>
          `          ${key(f.argnames?.[i] || `arg${i + 1}`)}: ${tsType(t.replace(/^_/, ''), 'b', enums)}${t.startsWith('_') ? '[]' : ''}`,
      );
      const ret = tsType(f.ret, f.rettyptype, enums);
      return block(f.name, [
        args.length ? `        Args: {\n${args.join('\n')}\n        }` : '        Args: Record<PropertyKey, never>',
        `        Returns: ${f.retset ? `${ret}[]` : ret}`,
      ]);
    });
    const enumLines = ens.rows.map((e) => `      ${key(e.name)}: ${e.labels.map(q).join(' | ')}`);
    const section = (name: string, items: string[]) =>
      `    ${name}: {\n${items.length ? items.join('\n') : '      [_ in never]: never'}\n    }`;
    return [
      '// Generated by Plinth (GET /api/database/types/typescript, npm run plinth -- gen types): do not edit.',
      'export type Json = string | number | boolean | null | { [key: string]: Json | undefined } | Json[]',
      '',
      'export type Database = {',
      '  public: {',
      section('Tables', tables),
      section('Views', views),
      section('Functions', functions),
      section('Enums', enumLines),
      section('CompositeTypes', []),
      '  }',
      '}',
      '',
      'type PublicSchema = Database["public"]',
      'export type Tables<T extends keyof PublicSchema["Tables"]> = PublicSchema["Tables"][T]["Row"]',
      'export type TablesInsert<T extends keyof PublicSchema["Tables"]> = PublicSchema["Tables"][T]["Insert"]',
      'export type TablesUpdate<T extends keyof PublicSchema["Tables"]> = PublicSchema["Tables"][T]["Update"]',
      'export type Enums<T extends keyof PublicSchema["Enums"]> = PublicSchema["Enums"][T]',
      '',
    ].join('\n');
  }
}
