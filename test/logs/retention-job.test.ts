// The log store's retention as a scheduled job (STYLE.md rule 17): with jobs (a server
// Postgres) it is a pg-boss schedule stored in the database, worked by any instance, and the
// in-process prune after writes is off; the job drops lines past LOGS_RETENTION_DAYS.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';

describe.each(backends())('log retention as a scheduled job (%s)', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp(backend, { LOGS_RETENTION_DAYS: '1' });
  });
  afterAll(async () => t?.close());

  it('is a stored schedule that survives restarts, and its job drops the old lines', async () => {
    expect(t.deps.jobs).not.toBeNull();
    const { rows } = await t.deps.db.query<{ name: string; cron: string }>(
      `select name, cron from pgboss.schedule where name in ('logs-retention', 'storage-resumable-sweep') order by name`,
    );
    // Only the shared database's housekeeping: uploads in progress are on each instance's disk.
    expect(rows).toEqual([{ name: 'logs-retention', cron: '* * * * *' }]);
    await t.deps.db.query(
      `insert into system.logs (time, source, level, message, fields) values (now() - interval '3 days', 'jobs', 'info', 'retention-probe-old', '{}'), (now(), 'jobs', 'info', 'retention-probe-new', '{}')`,
    );
    // Writes no longer prune in this process: the old line outlives a flush of new lines.
    for (let i = 0; i < 5; i++) t.deps.logs.write('jobs', 'info', `retention-filler-${i}`);
    await new Promise((r) => setTimeout(r, 1200));
    const count = async (m: string) =>
      (await t.deps.db.query<{ n: number }>(`select count(*)::int as n from system.logs where message = $1`, [m]))
        .rows[0]!.n;
    expect(await count('retention-probe-old')).toBe(1);
    await t.deps.jobs!.send('logs-retention', {});
    await until(async () => (await count('retention-probe-old')) === 0, 10_000, 'the retention job');
    expect(await count('retention-probe-new')).toBe(1);
  });
});
