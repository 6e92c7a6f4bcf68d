// Rules on the running database: the cache, long and idle-in-transaction sessions
// (performance), dead tuples, stale statistics and sequences near their end (health).
import { finding, q, type Rule } from './types.js';

export const cacheHitRatio: Rule = {
  id: 'low_cache_hit_ratio',
  category: 'performance',
  async run({ db, thresholds }) {
    const { rows } = await db.query<{ db: string; ratio: number; reads: number }>(
      `select datname as db, blks_hit::float8 / nullif(blks_hit + blks_read, 0) as ratio, blks_hit + blks_read as reads
         from pg_stat_database where datname = current_database()`,
    );
    const r = rows[0];
    if (!r || r.ratio === null || Number(r.reads) < thresholds.cacheReadsMin || r.ratio >= thresholds.cacheHitRatioMin)
      return [];
    return [
      finding(cacheHitRatio, {
        severity: 'warning',
        object: { type: 'database', name: r.db },
        title: `Only ${(r.ratio * 100).toFixed(1)}% of block reads come from the cache`,
        why: "Reads that miss shared_buffers go to disk; below ~99% the working set does not fit in memory. The fix is the operator's (a superuser, then a restart): more memory, e.g. alter system set shared_buffers = '1GB'.",
        fixSql: null,
      }),
    ];
  },
};

// \`endable\`: whether the owner role (what admin SQL runs as; its name as ownerRoleName in
// src/db/owner.ts, or the current user where there is none) may cancel or end the session.
// Sessions of Plinth's own superuser are not: their fix would fail, so it is the operator's.
const SESSIONS = `select pid, usename as user, state, extract(epoch from now() - coalesce(case when state = 'active' then query_start else state_change end, now()))::int as seconds,
    coalesce(pg_has_role(coalesce(to_regrole('plinth_owner_' || left(md5(current_database()), 12))::oid, (select oid from pg_roles where rolname = current_user)), usesysid, 'member')
      and not (select rolsuper from pg_roles where oid = usesysid), false) as endable
  from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`;

/** The fix of a session: \`fn(pid)\` when admin SQL may run it, else null and the operator's way in \`why\`. */
const sessionFix = (fn: string, r: { pid: number; endable: boolean }, why: string) =>
  r.endable
    ? { why, fixSql: `select ${fn}(${Number(r.pid)});` }
    : {
        why: `${why} It is a session of a superuser: the operator ends it (select ${fn}(${Number(r.pid)}) as a superuser).`,
        fixSql: null,
      };

export const longQueries: Rule = {
  id: 'long_running_query',
  category: 'performance',
  async run({ db, thresholds }) {
    const { rows } = await db.query<{ pid: number; user: string; seconds: number; endable: boolean }>(
      `${SESSIONS} and state = 'active' and now() - query_start > make_interval(secs => $1::float8)`,
      [thresholds.longQuerySeconds],
    );
    return rows.map((r) =>
      finding(longQueries, {
        severity: 'warning',
        object: { type: 'session', name: `pid ${r.pid}` },
        title: `A query of ${r.user} has run for ${r.seconds} s (pid ${r.pid})`,
        ...sessionFix(
          'pg_cancel_backend',
          r,
          'It holds a connection and its locks, and keeps VACUUM from cleaning up rows changed since it began.',
        ),
      }),
    );
  },
};

export const idleInTransaction: Rule = {
  id: 'idle_in_transaction',
  category: 'performance',
  async run({ db, thresholds }) {
    const { rows } = await db.query<{ pid: number; user: string; seconds: number; endable: boolean }>(
      `${SESSIONS} and state like 'idle in transaction%' and now() - state_change > make_interval(secs => $1::float8)`,
      [thresholds.idleInTransactionSeconds],
    );
    return rows.map((r) =>
      finding(idleInTransaction, {
        severity: 'warning',
        object: { type: 'session', name: `pid ${r.pid}` },
        title: `A session of ${r.user} has been idle in a transaction for ${r.seconds} s (pid ${r.pid})`,
        ...sessionFix(
          'pg_terminate_backend',
          r,
          'An open transaction holds its locks and a pooled connection, and blocks VACUUM, until it commits or is ended.',
        ),
      }),
    );
  },
};

export const deadTuples: Rule = {
  id: 'dead_tuples',
  category: 'health',
  async run({ db, thresholds }) {
    const { rows } = await db.query<{ table: string; dead: number; live: number }>(
      `select relname as table, n_dead_tup as dead, n_live_tup as live from pg_stat_user_tables
        where schemaname = 'public' and n_dead_tup >= $1 and n_dead_tup > $2::float8 * (n_live_tup + n_dead_tup) order by 2 desc`,
      [thresholds.deadTupleMin, thresholds.deadTupleRatio],
    );
    return rows.map((r) =>
      finding(deadTuples, {
        severity: 'warning',
        object: { type: 'table', name: `public.${r.table}` },
        title: `"${r.table}" holds ${r.dead} dead rows beside ${r.live} live ones`,
        why: 'Dead rows bloat the table and its indexes, so scans read more pages; autovacuum is not keeping up.',
        // Admin SQL runs a lone VACUUM outside a transaction (src/database/tables.ts).
        fixSql: `vacuum (analyze) public.${q(r.table)};`,
      }),
    );
  },
};

export const staleStatistics: Rule = {
  id: 'stale_statistics',
  category: 'health',
  async run({ db, thresholds }) {
    const { rows } = await db.query<{ table: string; changed: number }>(
      `select t.relname as table, t.n_mod_since_analyze as changed from pg_stat_user_tables t join pg_class c on c.oid = t.relid
        where t.schemaname = 'public' and t.n_mod_since_analyze >= $1 and t.n_mod_since_analyze > 0.2 * greatest(c.reltuples, 0) order by 2 desc`,
      [thresholds.staleModifiedMin],
    );
    return rows.map((r) =>
      finding(staleStatistics, {
        severity: 'info',
        object: { type: 'table', name: `public.${r.table}` },
        title: `The statistics of "${r.table}" are stale: ${r.changed} rows changed since the last ANALYZE`,
        why: 'The planner chooses plans from these statistics; stale ones lead to slow plans (wrong join order, scans instead of indexes).',
        fixSql: `analyze public.${q(r.table)};`,
      }),
    );
  },
};

export const sequenceNearEnd: Rule = {
  id: 'sequence_near_end',
  category: 'health',
  async run({ db, thresholds }) {
    // `table`/`column`: what the sequence feeds (a serial column owns it, deptype 'a').
    const { rows } = await db.query<{
      name: string;
      type: string;
      used: number;
      table: string | null;
      column: string | null;
    }>(
      `select s.sequencename as name, s.data_type::text as type, (s.last_value::numeric / s.max_value::numeric)::float8 as used,
          (select c.relname from pg_depend d join pg_class c on c.oid = d.refobjid
            where d.classid = 'pg_class'::regclass and d.objid = format('%I.%I', s.schemaname, s.sequencename)::regclass and d.refclassid = 'pg_class'::regclass and d.deptype = 'a' and c.relkind in ('r', 'p') limit 1) as table,
          (select a.attname from pg_depend d join pg_attribute a on a.attrelid = d.refobjid and a.attnum = d.refobjsubid
            where d.classid = 'pg_class'::regclass and d.objid = format('%I.%I', s.schemaname, s.sequencename)::regclass and d.refclassid = 'pg_class'::regclass and d.deptype = 'a' limit 1) as column
         from pg_sequences s where s.schemaname = 'public' and s.increment_by > 0 and s.last_value is not null
          and s.last_value::numeric / s.max_value::numeric >= $1 order by 3 desc`,
      [thresholds.sequenceUsedRatio],
    );
    return rows.map((r) =>
      finding(sequenceNearEnd, {
        severity: r.used >= 0.95 ? 'critical' : 'warning',
        object: { type: 'sequence', name: `public.${r.name}` },
        title: `Sequence "${r.name}" (${r.type}) has used ${(r.used * 100).toFixed(1)}% of its range`,
        why: 'When it reaches its maximum, every insert that needs a new id fails.',
        fixSql: [
          r.table && r.column ? `alter table public.${q(r.table)} alter column ${q(r.column)} type bigint;` : '',
          `alter sequence public.${q(r.name)} as bigint maxvalue 9223372036854775807;`,
        ]
          .filter(Boolean)
          .join('\n'),
      }),
    );
  },
};

export const HEALTH_RULES: Rule[] = [
  cacheHitRatio,
  longQueries,
  idleInTransaction,
  deadTuples,
  staleStatistics,
  sequenceNearEnd,
];
