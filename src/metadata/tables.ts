import type { Queryable } from '../db/types.js';

/** One table of schema public, as GET /api/metadata and GET /api/metadata/{table} give it. */
export interface TableMetadata {
  tableName: string;
  /** An estimate (statistics), not a count: cheap on any size of table. */
  recordCount: number;
  sizeBytes: number;
  rlsEnabled: boolean;
  realtime: boolean;
  columns: Array<{ columnName: string; type: string; isNullable: boolean; defaultValue: string | null }>;
  primaryKey: string[];
  foreignKeys: Array<{
    name: string;
    columns: string[];
    referencedTable: string;
    referencedColumns: string[];
    onDelete: string;
    definition: string;
  }>;
  constraints: Array<{ name: string; type: string; definition: string }>;
  indexes: Array<{ name: string; definition: string; isUnique: boolean; isPrimary: boolean }>;
  policies: Array<{
    policyName: string;
    command: string;
    permissive: boolean;
    roles: string[];
    using: string | null;
    withCheck: string | null;
  }>;
}

const cols = (rel: string, keys: string) =>
  `(select coalesce(json_agg(a.attname order by k.ord), '[]') from unnest(${keys}) with ordinality k(attnum, ord) join pg_attribute a on a.attrelid = ${rel} and a.attnum = k.attnum)`;

// Everything about the tables of public in one statement: the catalogs build the JSON.
const TABLES_SQL = `
select c.relname as "tableName",
  -- reltuples once ANALYZE (or autovacuum) ran; before that the live-tuple counter.
  case when c.reltuples >= 0 then c.reltuples::bigint else coalesce(s.n_live_tup, 0) end as "recordCount",
  pg_total_relation_size(c.oid) as "sizeBytes",
  c.relrowsecurity as "rlsEnabled",
  exists (select 1 from pg_trigger t where t.tgrelid = c.oid and t.tgname = $1) as realtime,
  (select coalesce(json_agg(json_build_object('columnName', a.attname, 'type', format_type(a.atttypid, a.atttypmod),
      'isNullable', not a.attnotnull, 'defaultValue', pg_get_expr(d.adbin, d.adrelid)) order by a.attnum), '[]')
    from pg_attribute a left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
    where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped) as columns,
  coalesce((select ${cols('c.oid', 'pk.conkey')} from pg_constraint pk where pk.conrelid = c.oid and pk.contype = 'p'), '[]') as "primaryKey",
  (select coalesce(json_agg(json_build_object('name', fk.conname, 'columns', ${cols('fk.conrelid', 'fk.conkey')},
      'referencedTable', fk.confrelid::regclass::text, 'referencedColumns', ${cols('fk.confrelid', 'fk.confkey')},
      'onDelete', case fk.confdeltype when 'r' then 'RESTRICT' when 'c' then 'CASCADE' when 'n' then 'SET NULL' when 'd' then 'SET DEFAULT' else 'NO ACTION' end,
      'definition', pg_get_constraintdef(fk.oid)) order by fk.conname), '[]')
    from pg_constraint fk where fk.conrelid = c.oid and fk.contype = 'f') as "foreignKeys",
  (select coalesce(json_agg(json_build_object('name', k.conname,
      'type', case k.contype when 'p' then 'PRIMARY KEY' when 'u' then 'UNIQUE' when 'c' then 'CHECK' else 'EXCLUDE' end,
      'definition', pg_get_constraintdef(k.oid)) order by k.conname), '[]')
    from pg_constraint k where k.conrelid = c.oid and k.contype in ('p', 'u', 'c', 'x')) as constraints,
  (select coalesce(json_agg(json_build_object('name', i.relname, 'definition', pg_get_indexdef(x.indexrelid),
      'isUnique', x.indisunique, 'isPrimary', x.indisprimary) order by i.relname), '[]')
    from pg_index x join pg_class i on i.oid = x.indexrelid where x.indrelid = c.oid) as indexes,
  (select coalesce(json_agg(json_build_object('policyName', p.polname,
      'command', case p.polcmd when 'r' then 'SELECT' when 'a' then 'INSERT' when 'w' then 'UPDATE' when 'd' then 'DELETE' else 'ALL' end,
      'permissive', p.polpermissive,
      'roles', case when p.polroles = '{0}' then '["public"]'::json else (select json_agg(r.rolname order by r.rolname) from pg_roles r where r.oid = any (p.polroles)) end,
      'using', pg_get_expr(p.polqual, p.polrelid), 'withCheck', pg_get_expr(p.polwithcheck, p.polrelid)) order by p.polname), '[]')
    from pg_policy p where p.polrelid = c.oid) as policies
from pg_class c left join pg_stat_user_tables s on s.relid = c.oid
where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p') and ($2::text is null or c.relname = $2)
order by c.relname`;

/** The tables of schema public (or the one named), with columns, keys, indexes, RLS and policies. */
export async function readTables(
  db: Queryable,
  realtimeTrigger: string,
  table: string | null = null,
): Promise<TableMetadata[]> {
  const { rows } = await db.query<TableMetadata>(TABLES_SQL, [realtimeTrigger, table]);
  return rows.map((r) => ({ ...r, recordCount: Number(r.recordCount), sizeBytes: Number(r.sizeBytes) }));
}
