// Plinth's own pool keeps two connections open when idle; what a burst opened beyond them closes
// after 2 s unused, not pg.Pool's 10 s (src/db/pool-idle.ts): a start's burst held
// ≈ 8 idle Postgres backends through an idle server's first 10 s.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/db/postgres.js';
import { KEEP_IDLE } from '../../src/db/pool-idle.js';
import type { Db } from '../../src/db/types.js';
import { freshDb } from '../helpers/db.js';

describe('the pool after a burst (embedded)', () => {
  let fresh: Awaited<ReturnType<typeof freshDb>>;
  let db: Db;
  beforeAll(async () => {
    fresh = await freshDb('embedded');
    db = await openPostgres(fresh.url, { max: 10, prepare: true, keepIdle: KEEP_IDLE });
  });
  afterAll(async () => {
    await db?.close();
    await fresh?.drop();
  });

  it("closes the burst's extra connections within seconds and keeps KEEP_IDLE open", async () => {
    await Promise.all(Array.from({ length: 6 }, () => db.query('select pg_sleep(0.2)')));
    expect(db.poolStats!().total).toBe(6);
    await new Promise((r) => setTimeout(r, 3500));
    expect(db.poolStats!().total).toBe(KEEP_IDLE);
    // Still serving, on the kept connections.
    expect((await db.query<{ n: number }>('select 1 as n')).rows[0]!.n).toBe(1);
  });
});
