// The job wrapper on a real Postgres (each backend): a job sent in a rolled-back transaction
// never runs, one in a committed one runs once, a failing job is retried by its policy, and a
// job left active by a "killed" instance is handed to another after it expires.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, freshDb } from '../helpers/db.js';
import { until } from '../helpers/until.js';
import { Jobs } from '../../src/jobs/index.js';
import { openPostgres } from '../../src/db/postgres.js';

describe.each(backends())('jobs (%s)', (backend) => {
  let fresh: Awaited<ReturnType<typeof freshDb>>;
  let jobs: Jobs;
  beforeAll(async () => {
    fresh = await freshDb(backend);
    jobs = new Jobs(fresh.db, { maintenanceSeconds: 1 });
    await jobs.start();
  });
  afterAll(async () => {
    await jobs?.stop();
    await fresh?.drop();
  });

  it('runs a job only if its transaction commits, once, and picks it up within milliseconds', async () => {
    const seen: string[] = [];
    let startedAt = 0;
    await jobs.work<{ v: string }>('t-commit', { concurrency: 2 }, async (job) => {
      seen.push(job.data.v);
      startedAt ||= Date.now();
    });
    await fresh.db
      .transaction(async (tx) => {
        await jobs.send('t-commit', { v: 'rolled-back' }, {}, tx);
        throw new Error('rollback');
      })
      .catch(() => {});
    const sentAt = Date.now();
    await fresh.db.transaction((tx) => jobs.send('t-commit', { v: 'committed' }, {}, tx));
    await until(async () => seen.length === 1, 5000, 'the committed job');
    await new Promise((r) => setTimeout(r, 700));
    expect(seen).toEqual(['committed']);
    expect(startedAt - sentAt).toBeLessThan(400);
  });

  it('retries a failing job by its policy, then fails it', async () => {
    let attempts = 0;
    await jobs.work('t-retry', { concurrency: 1 }, async () => {
      attempts++;
      throw new Error('boom');
    });
    const id = await jobs.send('t-retry', {}, { retryLimit: 2, retryDelaySeconds: 1 });
    await until(async () => (await jobs.boss.getJobById('t-retry', id))?.state === 'failed', 15_000, 'the job to fail');
    expect(attempts).toBe(3);
  });

  it('hands a job left active by a killed instance to another once it expires', async () => {
    const db2 = await openPostgres(fresh.url, { max: 3 });
    const killed = new Jobs(db2, { maintenanceSeconds: 1 });
    await killed.start();
    let hung = 0;
    await killed.work('t-kill', { concurrency: 1 }, () => {
      hung++;
      return new Promise(() => {}); // never ends: the instance "dies" with it
    });
    const id = await jobs.send('t-kill', {}, { retryLimit: 1, retryDelaySeconds: 1, expireInSeconds: 2 });
    await until(async () => hung === 1, 5000, 'the job to start');
    await killed.stop({ graceful: false });
    await db2.close();
    let took = 0;
    await jobs.work('t-kill', { concurrency: 1 }, async () => {
      took++;
    });
    await until(async () => (await jobs.boss.getJobById('t-kill', id))?.state === 'completed', 15_000, 'the take-over');
    expect(took).toBe(1);
  });

  it('an idle worker asks less often, yet takes a job that came without a wake-up within 5 s', async () => {
    let took = 0;
    await jobs.work('t-quiet', { concurrency: 1 }, async () => {
      took++;
    });
    // The worker has run nothing since it started: after 8 s it asks every 5 s (IDLE_POLL_MAX_MS).
    await new Promise((r) => setTimeout(r, 8000));
    // As the job library's cron does: inserted with no NOTIFY, so only the worker's own poll finds it.
    await jobs.boss.send('t-quiet', {});
    const sentAt = Date.now();
    await until(async () => took === 1, 10_000, 'the job sent without a wake-up');
    expect(Date.now() - sentAt).toBeLessThan(5500);
  }, 30_000);

  it('says when the waiting jobs reach the bound (JOBS_MAX_QUEUED), so producers stop adding', async () => {
    const bounded = new Jobs(fresh.db, { maxQueued: 150 });
    await bounded.queue('t-full');
    await bounded.sendMany(
      't-full',
      Array.from({ length: 100 }, (_, i) => ({ i })),
    );
    expect(await bounded.full()).toBe(false);
    const other = new Jobs(fresh.db, { maxQueued: 150 });
    await other.sendMany(
      't-full',
      Array.from({ length: 60 }, (_, i) => ({ i })),
    );
    expect(await other.full()).toBe(true);
    expect((await jobs.depth())['t-full']).toEqual({ queued: 160, active: 0 });
  });
});
