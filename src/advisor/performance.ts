// Performance rules: missing and wasted indexes, policies that call auth.uid() per row,
// tables read by sequential scans, the cache, sessions that run or idle too long.
import { splitStatements } from '../database/migrations/risk.js';
import { finding, q, type Finding, type Rule } from './types.js';

const colList = (cols: string[]) => cols.map(q).join(', ');

export const fkWithoutIndex: Rule = {
  id: 'foreign_key_without_index',
  category: 'performance',
  async run({ db }) {
    const { rows } = await db.query<{ table: string; name: string; columns: string[] }>(
      `select r.relname as table, c.conname as name,
          array(select a.attname::text from unnest(c.conkey) with ordinality k(n, o) join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.n order by k.o) as columns
         from pg_constraint c join pg_class r on r.oid = c.conrelid
        where c.contype = 'f' and r.relnamespace = 'public'::regnamespace
          and not exists (select 1 from pg_index i where i.indrelid = c.conrelid
            and (select array_agg(x order by x) from unnest((string_to_array(i.indkey::text, ' ')::int2[])[1:cardinality(c.conkey)]) x)
              = (select array_agg(x order by x) from unnest(c.conkey) x))
        order by 1, 2`,
    );
    return rows.map((r) =>
      finding(fkWithoutIndex, {
        severity: 'warning',
        object: { type: 'foreign key', name: `public.${r.table}.${r.name}` },
        title: `Foreign key "${r.name}" of "${r.table}" (${r.columns.join(', ')}) has no index`,
        why: 'Joins and embeddings along it scan the table, and every delete or key change in the referenced table scans it too.',
        fixSql: `create index on public.${q(r.table)} (${colList(r.columns)});`,
      }),
    );
  },
};

export const policyColumnIndex: Rule = {
  id: 'policy_column_without_index',
  category: 'performance',
  async run({ db }) {
    // A policy depends (pg_depend) on every column its expressions read.
    const { rows } = await db.query<{ table: string; column: string; policies: string[] }>(
      `select c.relname as table, a.attname as column, array_agg(distinct p.polname::text) as policies
         from pg_policy p join pg_depend d on d.classid = 'pg_policy'::regclass and d.objid = p.oid and d.refclassid = 'pg_class'::regclass and d.refobjsubid > 0
         join pg_class c on c.oid = d.refobjid join pg_attribute a on a.attrelid = c.oid and a.attnum = d.refobjsubid
        where c.relnamespace = 'public'::regnamespace and d.refobjid = p.polrelid
          and not exists (select 1 from pg_index i where i.indrelid = c.oid and i.indkey[0] = a.attnum)
        group by 1, 2 order by 1, 2`,
    );
    return rows.map((r) =>
      finding(policyColumnIndex, {
        severity: 'info',
        object: { type: 'column', name: `public.${r.table}.${r.column}` },
        title: `Column "${r.column}" of "${r.table}" is read by policies (${r.policies.join(', ')}) and has no index`,
        why: 'The policy is a filter on every query of users and anon: without an index each one scans the whole table.',
        fixSql: `create index on public.${q(r.table)} (${q(r.column)});`,
      }),
    );
  },
};

const AUTH_FN = /^(uid|jwt|role|email)$/;

/** Whether an expression calls auth.uid() (jwt, role, email) outside a sub-select: once per row. */
export async function callsAuthPerRow(expr: string): Promise<boolean> {
  const [stmt] = await splitStatements(`select (${expr})`);
  const walk = (node: unknown, inSelect: boolean): boolean => {
    if (Array.isArray(node)) return node.some((n) => walk(n, inSelect));
    if (!node || typeof node !== 'object') return false;
    const o = node as Record<string, any>;
    if (o.FuncCall) {
      const name = (o.FuncCall.funcname ?? []).map((p: any) => p.String?.sval);
      if (!inSelect && name.length === 2 && name[0] === 'auth' && AUTH_FN.test(name[1])) return true;
    }
    if (o.SubLink) return walk(o.SubLink, true);
    return Object.values(o).some((v) => walk(v, inSelect));
  };
  return stmt ? walk(stmt.node.targetList, false) : false;
}

const wrapAuth = (expr: string) => expr.replace(/(?<!SELECT )\bauth\.(uid|jwt|role|email)\(\)/g, '(select auth.$1())');

export const authPerRow: Rule = {
  id: 'policy_auth_call_per_row',
  category: 'performance',
  async run({ db }) {
    const { rows } = await db.query<{ table: string; policy: string; using: string | null; check: string | null }>(
      `select c.relname as table, p.polname as policy, pg_get_expr(p.polqual, p.polrelid) as using, pg_get_expr(p.polwithcheck, p.polrelid) as check
         from pg_policy p join pg_class c on c.oid = p.polrelid where c.relnamespace = 'public'::regnamespace order by 1, 2`,
    );
    const out: Finding[] = [];
    for (const r of rows) {
      const using = r.using !== null && (await callsAuthPerRow(r.using));
      const check = r.check !== null && (await callsAuthPerRow(r.check));
      if (!using && !check) continue;
      const parts = [
        using ? `using (${wrapAuth(r.using!)})` : '',
        check ? `with check (${wrapAuth(r.check!)})` : '',
      ].filter(Boolean);
      out.push(
        finding(authPerRow, {
          severity: 'warning',
          object: { type: 'policy', name: `public.${r.table}.${r.policy}` },
          title: `Policy "${r.policy}" of "${r.table}" calls auth.uid() (or auth.jwt()) for every row`,
          why: 'Postgres evaluates the call once per row; written as (select auth.uid()) it runs once per statement, often 10-100x faster on big tables.',
          fixSql: `alter policy ${q(r.policy)} on public.${q(r.table)} ${parts.join(' ')};`,
        }),
      );
    }
    return out;
  },
};

export const unusedIndex: Rule = {
  id: 'unused_index',
  category: 'performance',
  async run({ db, thresholds }) {
    const { rows } = await db.query<{ table: string; index: string }>(
      `select s.relname as table, s.indexrelname as index from pg_stat_user_indexes s join pg_index i on i.indexrelid = s.indexrelid
         join pg_stat_user_tables t on t.relid = s.relid
        where s.schemaname = 'public' and s.idx_scan = 0 and not i.indisunique and not i.indisprimary
          and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid and k.conrelid = i.indrelid)
          and t.seq_scan + coalesce(t.idx_scan, 0) >= $1 order by 1, 2`,
      [thresholds.unusedIndexTableReads],
    );
    return rows.map((r) =>
      finding(unusedIndex, {
        severity: 'info',
        object: { type: 'index', name: `public.${r.index}` },
        title: `Index "${r.index}" of "${r.table}" has never been used`,
        why: 'Every write to the table also updates it, and it takes space and cache, for no read that uses it (statistics since the last reset).',
        fixSql: `drop index public.${q(r.index)};`,
      }),
    );
  },
};

/** An index of a public table, with the constraint it backs (primary key, unique, exclusion) if any. */
interface IndexRow {
  table: string;
  index: string;
  constraint: string | null;
}

// Indexes alike in columns, operator classes, expressions, predicate and uniqueness, the one
// backing a constraint (then the oldest) first. Only the table's own primary key, unique and
// exclusion constraints count: a foreign key elsewhere names the index it references in its
// conindid too, and joining it listed that index twice ("projects_pkey duplicates projects_pkey").
const DUPLICATES_SQL = `with ix as (
    select c.relname as table, x.relname as index, x.oid, i.indrelid,
      (select k.conname from pg_constraint k where k.conindid = i.indexrelid and k.conrelid = i.indrelid and k.contype in ('p', 'u', 'x')) as constraint,
      i.indkey::text as key, i.indclass::text as cls, i.indisunique as uniq,
      coalesce(pg_get_expr(i.indexprs, i.indrelid), '') as exprs, coalesce(pg_get_expr(i.indpred, i.indrelid), '') as pred
      from pg_index i join pg_class x on x.oid = i.indexrelid join pg_class c on c.oid = i.indrelid
     where c.relnamespace = 'public'::regnamespace)
  select min(ix.table) as table, json_agg(json_build_object('table', ix.table, 'index', ix.index, 'constraint', ix.constraint)
      order by (ix.constraint is null), ix.oid) as indexes
    from ix group by ix.indrelid, ix.key, ix.cls, ix.exprs, ix.pred, ix.uniq having count(*) > 1 order by 1`;

/** The SQL that removes a duplicate: its constraint when it backs one (DROP INDEX would fail, 2BP01). */
const dropDuplicate = (d: IndexRow) =>
  d.constraint
    ? `alter table public.${q(d.table)} drop constraint ${q(d.constraint)};`
    : `drop index public.${q(d.index)};`;

export const duplicateIndex: Rule = {
  id: 'duplicate_index',
  category: 'performance',
  async run({ db }) {
    const { rows } = await db.query<{ table: string; indexes: IndexRow[] | string }>(DUPLICATES_SQL);
    return rows.flatMap((r) => {
      const [keep, ...drop] = (typeof r.indexes === 'string' ? JSON.parse(r.indexes) : r.indexes) as IndexRow[];
      return drop.map((d) =>
        finding(duplicateIndex, {
          severity: 'warning',
          object: { type: 'index', name: `public.${d.index}` },
          title: `Index "${d.index}" of "${r.table}" duplicates "${keep!.index}"`,
          why: 'Two identical indexes double the cost of every write and the space, and help no read more than one does.',
          fixSql: dropDuplicate(d),
        }),
      );
    });
  },
};

export const seqScans: Rule = {
  id: 'sequential_scans',
  category: 'performance',
  async run({ db, thresholds }) {
    const { rows } = await db.query<{ table: string; scans: number; rows: number }>(
      `select t.relname as table, t.seq_scan as scans, c.reltuples::bigint as rows from pg_stat_user_tables t join pg_class c on c.oid = t.relid
        where t.schemaname = 'public' and t.seq_scan >= $1 and c.reltuples >= $2 and t.seq_scan > coalesce(t.idx_scan, 0) order by 2 desc`,
      [thresholds.seqScanMin, thresholds.seqScanTableRows],
    );
    return rows.map((r) =>
      finding(seqScans, {
        severity: 'warning',
        object: { type: 'table', name: `public.${r.table}` },
        title: `"${r.table}" (~${r.rows} rows) was read by ${r.scans} sequential scans, more than by index`,
        // Which columns to index depends on the queries, which the catalog does not tell: no SQL to run blindly.
        why: `Each sequential scan reads the whole table; queries that filter it need an index on the filtered columns: create index on public.${q(r.table)} (<column>).`,
        fixSql: null,
      }),
    );
  },
};

export const PERFORMANCE_RULES: Rule[] = [
  fkWithoutIndex,
  policyColumnIndex,
  authPerRow,
  unusedIndex,
  duplicateIndex,
  seqScans,
];
export type { Finding };
