// Lines written in many batches come back through the reads exactly once, with their fields as
// written (the fields column is json since migration 0425: checked, not rebuilt), and the stats
// read the api lines' fields right.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, freshDb } from '../helpers/db.js';
import { migrate } from '../../src/db/migrate.js';
import { LogsService, type LogEntry } from '../../src/logs/index.js';
import type { Db } from '../../src/db/types.js';

const LINES = 2_345; // three batches of up to 1,000

const fieldsOf = (i: number) => ({
  i,
  odd: i % 2 === 1,
  tag: `tag-${i}-end`,
  text: `line "${i}" \\ ü ✓ \n tab\t`,
  nested: { list: [i, null, 'x'], empty: {} },
  none: null,
});

describe.each(backends())('log store batches (%s)', (backend) => {
  let db: Db;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    ({ db, drop } = await freshDb(backend));
    await migrate(db);
  });
  afterAll(async () => {
    await drop?.();
  });

  it('stores the fields column as json', async () => {
    const { rows } = await db.query<{ t: string }>(
      `select format_type(atttypid, atttypmod) as t from pg_attribute where attrelid = 'system.logs'::regclass and attname = 'fields'`,
    );
    expect(rows[0]?.t).toBe('json');
  });

  it('returns each line of many batches exactly once, newest first, with its fields', async () => {
    const logs = new LogsService(db, { store: true, retentionDays: 7, maxRows: 1_000_000, pruneEveryMs: 3600_000 });
    const before = Date.now();
    for (let i = 0; i < LINES; i++) logs.write('bulk', i % 10 === 0 ? 'warn' : 'info', `bulk ${i}`, fieldsOf(i));
    await logs.flush();
    expect(logs.state()).toMatchObject({ written: LINES, dropped: 0, pending: 0 });

    const seen: LogEntry[] = [];
    let cursor: string | undefined;
    do {
      const page = await logs.read({ sources: ['bulk'], limit: 1000, cursor });
      expect(page.total).toBe(LINES);
      seen.push(...page.logs);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);

    expect(seen).toHaveLength(LINES);
    expect(new Set(seen.map((l) => l.id)).size).toBe(LINES);
    // Newest first: the last line written comes first, the first last.
    expect(seen.map((l) => l.body.i)).toEqual(Array.from({ length: LINES }, (_, k) => LINES - 1 - k));
    for (const l of seen) {
      const i = l.body.i as number;
      expect(l).toMatchObject({ source: 'bulk', level: i % 10 === 0 ? 'warn' : 'info', eventMessage: `bulk ${i}` });
      expect(l.body).toEqual({ level: l.level, ...fieldsOf(i) });
      const t = Date.parse(l.timestamp);
      expect(t).toBeGreaterThanOrEqual(before - 1);
      expect(t).toBeLessThanOrEqual(Date.now());
    }

    // The filters over the same lines: level, text in the fields, text in the message.
    expect((await logs.read({ sources: ['bulk'], level: 'warn' })).total).toBe(Math.ceil(LINES / 10));
    const q = await logs.read({ sources: ['bulk'], q: 'TAG-1234-END' });
    expect(q.logs.map((l) => l.body.i)).toEqual([1234]);
    expect((await logs.read({ sources: ['bulk'], q: 'bulk 2344' })).total).toBe(1);
    // q matches the fields as stored: compact JSON, as written (docs/logs.md).
    expect((await logs.read({ sources: ['bulk'], q: '"odd":true' })).total).toBe(Math.floor(LINES / 2));
    await logs.close();
  });

  it('computes the per-minute stats from the api lines fields', async () => {
    const logs = new LogsService(db, { store: true, retentionDays: 7, maxRows: 1_000_000, pruneEveryMs: 3600_000 });
    const route = '/api/stats-probe/:id';
    const minute = Math.floor(Date.now() / 60_000) * 60_000 - 10 * 60_000; // ten minutes ago, one whole minute
    await logs.store.insert(
      Array.from({ length: 100 }, (_, k) => {
        const status = k < 3 ? 503 : 200;
        return {
          time: minute + k * 100,
          source: 'api',
          level: status >= 500 ? ('error' as const) : ('info' as const),
          message: `GET /api/stats-probe/${k} ${status}`,
          fields: { method: 'GET', route, status, durationMs: k + 1 },
        };
      }),
    );
    const stats = await logs.stats({ route });
    expect(stats).toEqual([
      {
        minute: new Date(minute).toISOString(),
        method: 'GET',
        route,
        count: 100,
        errors: 3,
        p50Ms: 50.5,
        p95Ms: 95.05,
        p99Ms: 99.01,
      },
    ]);
    await logs.close();
  });
});
