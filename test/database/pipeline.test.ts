// The pool pipelines (src/db/postgres.ts): a transaction's statements are written without
// waiting for the answers before them; a failed one aborts the transaction, so the ones sent
// behind it never run. A read marked `last` has its commit sent behind it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/types.js';
import { freshDb } from '../helpers/db.js';

describe.each(['embedded', 'postgres'] as const)('pipelined transactions (%s)', (backend) => {
  let fresh: Awaited<ReturnType<typeof freshDb>>;
  let db: Db;
  const count = async () => (await db.query<{ n: number }>('select count(*)::int as n from public.piped')).rows[0]!.n;

  beforeAll(async () => {
    fresh = await freshDb(backend);
    db = fresh.db;
    await db.exec('create table public.piped (n int)');
  });
  afterAll(async () => {
    await fresh?.drop();
  });

  it('a statement sent behind a failed one does not run', async () => {
    const before = await count();
    await expect(
      db.transaction(async (tx) => {
        const failing = tx.query('select 1 / (select count(*) from public.piped where n < 0)::int');
        failing.catch(() => {});
        const behind = tx.query('insert into public.piped values (1)');
        behind.catch(() => {});
        await failing;
        await behind;
      }),
    ).rejects.toThrow();
    expect(await count()).toBe(before);
  });

  it('commits behind the last statement, refuses one after it, and leaves the connection usable', async () => {
    const before = await count();
    const n = await db.transaction(async (tx) => {
      await tx.query('insert into public.piped values (2)');
      const { rows } = await tx.query<{ n: number }>('select count(*)::int as n from public.piped', [], { last: true });
      await expect(tx.query('select 1')).rejects.toThrow(/after the last/);
      return rows[0]!.n;
    });
    expect(n).toBe(before + 1);
    expect(await count()).toBe(before + 1);
    // A failing last statement rolls the transaction back; the next transaction starts clean.
    await expect(
      db.transaction(async (tx) => {
        await tx.query('insert into public.piped values (3)');
        await tx.query('select 1 / 0', [], { last: true });
      }),
    ).rejects.toThrow();
    for (let i = 0; i < 6; i++) expect(await count()).toBe(before + 1);
  });
});
