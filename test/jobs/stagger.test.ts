// The queues' workers start together at a server's start (src/automation.ts starts the areas side
// by side): their asks for jobs are spread over the poll interval, so they share a pool connection
// instead of opening one each (idle backends held for the pool's 10 s idle timeout).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDb } from '../helpers/db.js';
import { until } from '../helpers/until.js';
import { Jobs } from '../../src/jobs/index.js';
import { openPostgres } from '../../src/db/postgres.js';
import type { Db } from '../../src/db/types.js';

describe('workers started together (embedded)', () => {
  let fresh: Awaited<ReturnType<typeof freshDb>>;
  let db: Db;
  let jobs: Jobs;
  const names = Array.from({ length: 8 }, (_, i) => `t-stagger-${i}`);
  beforeAll(async () => {
    fresh = await freshDb('embedded');
    db = await openPostgres(fresh.url, { max: 10, prepare: true });
    jobs = new Jobs(db, { maintenanceSeconds: 60 });
    await jobs.start();
    for (const name of names) await jobs.queue(name);
  });
  afterAll(async () => {
    await jobs?.stop();
    await db?.close();
    await fresh?.drop();
  });

  it('ask for jobs one after the other, on one or two connections, and still take a waiting job at once', async () => {
    const seen: string[] = [];
    // Made before the workers exist: no wake-up reaches them; their first ask finds it.
    await jobs.send(names[7]!, {});
    const idle = db.poolStats!().total;
    await Promise.all(names.map((name) => jobs.work(name, { concurrency: 1 }, async () => void seen.push(name))));
    await until(async () => seen.length === 1, 3000, 'the waiting job');
    await new Promise((r) => setTimeout(r, 2500)); // the first asks, and two rounds of polls after them
    expect(db.poolStats!().total - idle).toBeLessThanOrEqual(2);
    // A sent job still wakes its worker at once.
    const sentAt = Date.now();
    await jobs.send(names[3]!, {});
    await until(async () => seen.length === 2, 3000, 'the sent job');
    expect(Date.now() - sentAt).toBeLessThan(400);
  });
});
