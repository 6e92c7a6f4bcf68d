// The pool pipelines (src/db/postgres.ts): a transaction's statements are written without
// waiting for the answers before them; a failed one aborts the transaction, so the ones sent
// behind it never run. A read marked `last` has its commit sent behind it. These pools log in
// with rights, so they wait for the `begin`'s answer; the authenticator's pool, which writes
// everything with the `begin`, has the same refused-`begin` count in authenticator.test.ts.
import pg from 'pg';
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
      // Refused before it is written: it must not run on its own behind the commit (counted below).
      await expect(tx.query('insert into public.piped values (9)')).rejects.toThrow(/after the last/);
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

  it('a transaction whose begin failed writes no statement of it: none runs on its own, outside the transaction', async () => {
    // A `begin` refused as a cancel request would refuse it (57014), without reaching the server.
    const before = await count();
    const original = pg.Client.prototype.query;
    const refuseBegin = function (this: pg.Client, ...args: unknown[]) {
      if (args[0] === 'begin' || args[0] === 'begin read only')
        return Promise.reject(Object.assign(new Error('canceling statement due to user request'), { code: '57014' }));
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof original;
    pg.Client.prototype.query = refuseBegin;
    try {
      await expect(
        db.transaction(async (tx) => {
          await tx.query('insert into public.piped values (4)');
          await tx.query('insert into public.piped values (5)', [], { last: true });
        }),
      ).rejects.toThrow();
    } finally {
      pg.Client.prototype.query = original;
    }
    expect(await count()).toBe(before);
  });
});
