// The store's bounds on a real database: retention by age, the row bound (oldest go first),
// and a store whose database is gone dropping lines without failing the writer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, freshDb } from '../helpers/db.js';
import { migrate } from '../../src/db/migrate.js';
import { LogsService } from '../../src/logs/index.js';
import type { Db } from '../../src/db/types.js';

describe.each(backends())('log store bounds (%s)', (backend) => {
  let db: Db;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    ({ db, drop } = await freshDb(backend));
    await migrate(db);
  });
  afterAll(async () => {
    await drop?.();
  });

  it('drops lines past the retention and the oldest past maxRows', async () => {
    const logs = new LogsService(db, { store: true, retentionDays: 7, maxRows: 5, pruneEveryMs: 3600_000 });
    const day = 86_400_000;
    await logs.store.insert([
      { time: Date.now() - 10 * day, source: 'api', level: 'info', message: 'ten days old', fields: {} },
      { time: Date.now() - 6 * day, source: 'api', level: 'info', message: 'six days old', fields: {} },
    ]);
    expect(await logs.prune()).toBe(1);
    expect((await logs.read({ q: 'days old' })).logs.map((l) => l.eventMessage)).toEqual(['six days old']);
    for (let i = 0; i < 12; i++) logs.write('schedules', 'info', `run ${i}`, { i });
    await logs.flush();
    await logs.prune();
    const left = await logs.read({});
    expect(left.total).toBe(5);
    expect(left.logs.map((l) => l.eventMessage)).toEqual(['run 11', 'run 10', 'run 9', 'run 8', 'run 7']);
    await logs.close();
  });

  it('runs retention after writes once pruneEveryMs has passed', async () => {
    const logs = new LogsService(db, { store: true, retentionDays: 1, maxRows: 3, flushMs: 1, pruneEveryMs: 0 });
    for (let i = 0; i < 10; i++) logs.write('webhooks', 'info', `delivery ${i}`);
    await logs.close();
    expect((await logs.read({ sources: ['webhooks'] })).total).toBeLessThanOrEqual(3);
  });

  it('LOGS_STORE off stores nothing', async () => {
    const logs = new LogsService(db, { store: false, retentionDays: 1, maxRows: 1000 });
    logs.write('api', 'info', 'not stored');
    await logs.close();
    expect((await logs.read({ q: 'not stored' })).total).toBe(0);
  });

  it('a database that is gone costs lines, not the writer', async () => {
    const gone = await freshDb(backend);
    await migrate(gone.db);
    const logs = new LogsService(gone.db, { store: true, retentionDays: 1, maxRows: 1000, flushMs: 1 });
    await gone.drop();
    for (let i = 0; i < 5; i++) logs.write('api', 'info', `line ${i}`);
    await logs.close();
    expect(logs.state()).toMatchObject({ written: 0, dropped: 5, failedBatches: 1 });
    expect(logs.state().lastError).toBeTruthy();
  });
});
