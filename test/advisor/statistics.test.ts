// The advisor's rules over statistics and sessions, with low thresholds so that a test can
// make each problem in seconds. Statistics are flushed on purpose (pg_stat_force_next_flush).
// The objects are made and every fix applied through admin SQL (the owner role, as the
// dashboard's Fix button and an agent do): a fix that only a superuser could run is a defect.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { until } from '../helpers/until.js';
import { AdvisorService } from '../../src/advisor/service.js';
import { DEFAULT_THRESHOLDS } from '../../src/advisor/types.js';
import { sql } from '../database/helpers.js';

describe.each(backends())('advisor rules over statistics and sessions (%s)', (backend) => {
  let t: TestApp;
  let advisor: AdvisorService;
  let client: pg.Client;
  const keys = async () => (await advisor.scan()).issues.map((i) => i.key);
  const issue = async (key: string) => (await advisor.scan()).issues.find((i) => i.key === key);
  /** Runs SQL on a connection of its own and flushes its statistics at once. */
  const run = async (q: string) => {
    await client.query(q);
    await client.query('select pg_stat_force_next_flush()');
    await client.query('select 1');
  };
  /** Runs the finding's fix through admin SQL (fails loudly if it does not apply). */
  const fix = async (key: string) => {
    const f = await issue(key);
    expect(f?.fixSql, key).toBeTruthy();
    await sql(t, f!.fixSql!);
  };
  const other = async (as: 'superuser' | 'owner' = 'superuser') => {
    const url = as === 'owner' ? t.deps.owner.db.connection!.url : t.deps.db.connection!.url;
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    c.on('error', () => {});
    return c;
  };
  beforeAll(async () => {
    t = await startApp(backend);
    advisor = new AdvisorService(t.deps.db, [], {
      ...DEFAULT_THRESHOLDS,
      longQuerySeconds: 1,
      idleInTransactionSeconds: 1,
      seqScanMin: 5,
      seqScanTableRows: 100,
      cacheHitRatioMin: 1.01,
      cacheReadsMin: 0,
      deadTupleMin: 500,
      staleModifiedMin: 500,
      unusedIndexTableReads: 3,
    });
    client = await other();
  });
  afterAll(async () => {
    await client?.end();
    await t?.close();
  });

  it('unused indexes, sequential scans and the cache hit ratio', async () => {
    await sql(t, 'create table public.scanned (id int primary key, a int, b int)');
    await sql(t, 'create index scanned_b_idx on public.scanned (b)');
    await run('insert into public.scanned select g, g, g from generate_series(1, 1000) g');
    await run('analyze public.scanned');
    for (let i = 0; i < 6; i++) await run('select count(*) from public.scanned where a = 5');
    await until(async () => (await keys()).includes('unused_index:public.scanned_b_idx'), 5000, 'the unused index');
    // Which columns to index depends on the queries: no SQL to run blindly, the template is in why.
    const seq = await issue('sequential_scans:public.scanned');
    expect(seq?.fixSql).toBeNull();
    expect(seq?.why).toContain('create index on public."scanned"');
    await fix('unused_index:public.scanned_b_idx');
    expect(await keys()).not.toContain('unused_index:public.scanned_b_idx');
    const cache = await issue(
      `low_cache_hit_ratio:${(await client.query('select current_database() as d')).rows[0].d}`,
    );
    // shared_buffers is the operator's (a superuser and a restart): no fix SQL for admin SQL.
    expect(cache?.fixSql).toBeNull();
    expect(cache?.why).toContain('shared_buffers');
  });

  it('dead tuples and stale statistics, fixed by VACUUM and ANALYZE', async () => {
    await sql(t, 'create table public.churn (id int primary key, v text)');
    await run(`insert into public.churn select g, 'x' from generate_series(1, 2000) g`);
    await until(async () => (await keys()).includes('stale_statistics:public.churn'), 5000, 'stale statistics');
    await fix('stale_statistics:public.churn');
    expect(await keys()).not.toContain('stale_statistics:public.churn');
    await run('delete from public.churn');
    await until(async () => (await keys()).includes('dead_tuples:public.churn'), 5000, 'dead tuples');
    const vacuum = (await issue('dead_tuples:public.churn'))!.fixSql!;
    // Admin SQL runs a lone VACUUM outside a transaction (it cannot run in one). A VACUUM cannot
    // remove rows a transaction open at that moment may still see (the app's own background
    // work in this database, e.g. the job queue): run the fix again until it has.
    await until(
      async () => (await sql(t, vacuum), await run('select 1'), !(await keys()).includes('dead_tuples:public.churn')),
      20_000,
      'the dead tuples to go',
    );
  });

  it('sequences near their end: the fix widens the column it feeds and the sequence', async () => {
    await sql(t, 'create sequence public.small_ids as smallint');
    await run(`select setval('public.small_ids', 32000)`);
    const s = await issue('sequence_near_end:public.small_ids');
    expect(s?.severity).toBe('critical'); // 97.7% of smallint
    await fix('sequence_near_end:public.small_ids');
    expect(await keys()).not.toContain('sequence_near_end:public.small_ids');
    await sql(t, 'create table public.tickets (id smallserial primary key, v text)');
    await run(`select setval('public.tickets_id_seq', 32000)`);
    expect((await issue('sequence_near_end:public.tickets_id_seq'))?.fixSql).toContain(
      'alter table public."tickets" alter column "id" type bigint;',
    );
    await fix('sequence_near_end:public.tickets_id_seq');
    expect(await keys()).not.toContain('sequence_near_end:public.tickets_id_seq');
    // Past the old smallint maximum: the widened column and sequence take it.
    await run(`select setval('public.tickets_id_seq', 40000)`);
    await sql(t, `insert into public.tickets (v) values ('after the fix')`);
  });

  it('long-running queries and sessions idle in a transaction of the owner role, ended by admin SQL', async () => {
    const idle = await other('owner');
    const busy = await other('owner');
    try {
      await idle.query('begin');
      await idle.query('select 1');
      const idlePid = (await idle.query('select pg_backend_pid() as p')).rows[0].p;
      const sleeping = busy.query('select pg_sleep(30)').catch(() => null);
      let busyPid: number | undefined;
      await until(
        async () => {
          busyPid = (
            await client.query(
              `select pid from pg_stat_activity where query = 'select pg_sleep(30)' and state = 'active'`,
            )
          ).rows[0]?.pid;
          return busyPid !== undefined;
        },
        5000,
        'the sleeping query to start',
      );
      await until(
        async () => (await keys()).includes(`idle_in_transaction:pid ${idlePid}`),
        5000,
        'the idle transaction',
      );
      await until(async () => (await keys()).includes(`long_running_query:pid ${busyPid}`), 5000, 'the long query');
      await fix(`long_running_query:pid ${busyPid}`);
      await sleeping;
      await fix(`idle_in_transaction:pid ${idlePid}`);
      await until(
        async () =>
          !(await keys()).some((k) => k.startsWith('idle_in_transaction:') || k.startsWith('long_running_query:')),
        5000,
        'the sessions to go',
      );
    } finally {
      await idle.end().catch(() => {});
      await busy.end().catch(() => {});
    }
  });

  it("a superuser's session has no fix SQL (the owner role may not end it): why names the operator's statement", async () => {
    const idle = await other('superuser');
    try {
      await idle.query('begin');
      await idle.query('select 1');
      const pid = (await idle.query('select pg_backend_pid() as p')).rows[0].p;
      const key = `idle_in_transaction:pid ${pid}`;
      await until(async () => (await keys()).includes(key), 5000, 'the idle transaction');
      const f = await issue(key);
      expect(f?.fixSql).toBeNull();
      expect(f?.why).toContain(`pg_terminate_backend(${pid})`);
    } finally {
      await idle.end().catch(() => {});
    }
  });
});
