// A save's write made while its check runs (src/functions/save.ts), on each real engine: what
// is committed when the check passes, fails, is slow, or when the write itself fails.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../src/db/pglite.js';
import type { Db, Queryable } from '../../src/db/types.js';
import { writeChecked } from '../../src/functions/save.js';
import { backends, freshDb } from '../helpers/db.js';

const engines = [...backends(), 'pglite'] as const;
const later = <T>(ms: number, value: T) => new Promise<T>((r) => setTimeout(() => r(value), ms));
const failsAfter = (ms: number, message: string) => later(ms, null).then(() => Promise.reject(new Error(message)));

describe.each(engines)('writeChecked on %s', (engine) => {
  let db: Db;
  let drop: () => Promise<void> = async () => {};

  beforeAll(async () => {
    if (engine === 'pglite') db = await openPglite(null);
    else ({ db, drop } = await freshDb(engine));
    await db.exec('create table public.saves (id text primary key, v text not null)');
  });
  afterAll(async () => {
    await drop();
    if (engine === 'pglite') await db.close();
  });

  const stored = async (id: string) =>
    (await db.query<{ v: string }>('select v from public.saves where id = $1', [id])).rows[0]?.v ?? null;
  const upsert = (id: string, v: string) => (q: Queryable) =>
    q
      .query<{ v: string }>(
        'insert into public.saves (id, v) values ($1, $2) on conflict (id) do update set v = excluded.v returning v',
        [id, v],
      )
      .then((r) => r.rows[0]!.v);

  it('commits the write once the check passed, the write made while the check ran', async () => {
    let writtenBeforeCheckEnded = false;
    const check = later(150, 'ok');
    const write = async (q: Queryable) => {
      const v = await upsert('a', 'v1')(q);
      writtenBeforeCheckEnded = (await Promise.race([check, later(0, 'pending')])) === 'pending';
      return v;
    };
    expect(await writeChecked(db, check, write)).toBe('v1');
    expect(writtenBeforeCheckEnded).toBe(true);
    expect(await stored('a')).toBe('v1');
  });

  it('rolls the write back when the check fails, with the check error, however the two are ordered', async () => {
    await upsert('b', 'v1')(db);
    for (const checkMs of [0, 100]) {
      const check = failsAfter(checkMs, 'bad module');
      await expect(writeChecked(db, check, upsert('b', `v2-${checkMs}`))).rejects.toThrow('bad module');
      expect(await stored('b')).toBe('v1');
    }
  });

  it('gives the check error first when both fail', async () => {
    const write = (q: Queryable) => q.query('insert into public.saves (id, v) values ($1, null)', ['c']);
    await expect(writeChecked(db, failsAfter(50, 'bad module'), write)).rejects.toThrow('bad module');
    expect(await stored('c')).toBeNull();
  });

  it('waits for the check before answering a failed write', async () => {
    let checkDone = false;
    const check = later(150, null).then(() => {
      checkDone = true;
    });
    const write = (q: Queryable) => q.query('insert into public.saves (id, v) values ($1, null)', ['d']);
    await expect(writeChecked(db, check, write)).rejects.toThrow();
    expect(checkDone).toBe(true);
  });

  it('lets go of the transaction past holdMs and writes after the check: once when it passes, not when it fails', async () => {
    // Meanwhile the database serves others (on PGlite, a held transaction would stop every query).
    const passed = writeChecked(db, later(400, 'ok'), upsert('e', 'slow'), 100);
    await later(200, null);
    expect(await stored('e')).toBeNull();
    expect(await passed).toBe('slow');
    expect(await stored('e')).toBe('slow');
    await expect(writeChecked(db, failsAfter(300, 'bad module'), upsert('e', 'bad'), 100)).rejects.toThrow(
      'bad module',
    );
    expect(await stored('e')).toBe('slow');
  });
});
