// Instances starting together on a fresh database (each backend): pg-boss's install and the
// queues' creation, done by several at the same moment, must all succeed. Before they were
// serialised (src/jobs/index.ts `exclusively`), one of two starts failed on the schema it saw
// missing ("pg_namespace_nspname_index") or deadlocked in create_queue.
import { afterAll, describe, expect, it } from 'vitest';
import { backends, freshDb } from '../helpers/db.js';
import { Jobs } from '../../src/jobs/index.js';
import { openPostgres } from '../../src/db/postgres.js';
import type { Db } from '../../src/db/types.js';

const INSTANCES = 3;

describe.each(backends())('jobs installed by instances starting together (%s)', (backend) => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c().catch(() => {});
  });

  it(`starts ${INSTANCES} instances at once on an empty database, each making the same queues`, async () => {
    const fresh = await freshDb(backend);
    cleanup.push(fresh.drop);
    const dbs: Db[] = [fresh.db];
    for (let i = 1; i < INSTANCES; i++) dbs.push(await openPostgres(fresh.url, { max: 3 }));
    const all = dbs.map((db) => new Jobs(db));
    for (const [i, jobs] of all.entries()) {
      cleanup.push(() => jobs.stop());
      if (i > 0) cleanup.push(() => dbs[i]!.close());
    }
    const outcomes = await Promise.allSettled(
      all.map(async (jobs) => {
        await jobs.start();
        for (const q of ['race-a', 'race-b', 'race-c']) await jobs.queue(q);
      }),
    );
    expect(outcomes.map((o) => (o.status === 'rejected' ? String(o.reason) : 'ok'))).toEqual(
      Array(INSTANCES).fill('ok'),
    );
    const { rows } = await fresh.db.query<{ name: string }>(
      `select name from pgboss.queue where name like 'race-%' order by name`,
    );
    expect(rows.map((r) => r.name)).toEqual(['race-a', 'race-b', 'race-c']);
  });
});
