// Statements of fixed text (db/types.ts `statement`) are prepared once per connection on the
// embedded server, and sent as plain text where a pooler may sit in between (DATABASE_URL).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/db/postgres.js';
import { SHAPES_PER_CONNECTION, shaped, statement, type Db } from '../../src/db/types.js';
import { freshDb } from '../helpers/db.js';

describe('prepared statements', () => {
  let fresh: Awaited<ReturnType<typeof freshDb>>;
  let plain: Db;
  const hot = statement('select $1::int + 1 as n');
  const prepared = (db: Db) =>
    db.transaction(async (tx) => {
      const { rows } = await tx.query<{ n: number }>(hot, [41]);
      const names = await tx.query<{ name: string }>('select name from pg_prepared_statements');
      return { n: rows[0]!.n, names: names.rows.map((r) => r.name) };
    });

  beforeAll(async () => {
    fresh = await freshDb('embedded');
    plain = await openPostgres(fresh.url, { max: 1 });
  });
  afterAll(async () => {
    await plain?.close();
    await fresh?.drop();
  });

  it('names a statement by its text: the same text, the same name', () => {
    expect(hot.name).toBe(statement('select $1::int + 1 as n').name);
    expect(statement('select 2').name).not.toBe(hot.name);
    expect(hot.name).toMatch(/^plinth_[0-9a-f]{24}$/);
  });

  it('prepares it on the embedded server, and answers the same both ways', async () => {
    const a = await prepared(fresh.db);
    expect(a).toEqual({ n: 42, names: [hot.name] });
    // The second run on the same connection reuses it (no error for a name prepared twice).
    expect((await prepared(fresh.db)).n).toBe(42);
    const b = await prepared(plain);
    expect(b).toEqual({ n: 42, names: [] });
  });

  it('keeps at most SHAPES_PER_CONNECTION request shapes prepared per connection, evicting the least recently used', async () => {
    const count = (tx: { query: Db['query'] }) =>
      tx.query<{ n: number }>(`select count(*)::int as n from pg_prepared_statements where name like 'plinth_s_%'`);
    const shape = (i: number) => shaped(`select $1::int + ${i} as n`);
    const seen = await fresh.db.transaction(async (tx) => {
      // A shape that fails (here: a bad cast) is not counted and does not poison later ones.
      await expect(tx.query('savepoint s')).resolves.toBeDefined();
      await expect(tx.query(shaped('select $1::int as n'), ['x'])).rejects.toBeDefined();
      await tx.query('rollback to savepoint s');
      for (let i = 0; i < SHAPES_PER_CONNECTION + 25; i++)
        expect((await tx.query<{ n: number }>(shape(i), [1])).rows[0]!.n).toBe(1 + i);
      const full = (await count(tx)).rows[0]!.n;
      // The first shapes were deallocated; running one again prepares it again.
      expect((await tx.query<{ n: number }>(shape(0), [5])).rows[0]!.n).toBe(5);
      expect((await tx.query<{ n: number }>(shape(SHAPES_PER_CONNECTION + 24), [0])).rows[0]!.n).toBe(
        SHAPES_PER_CONNECTION + 24,
      );
      return { full, after: (await count(tx)).rows[0]!.n };
    });
    expect(seen).toEqual({ full: SHAPES_PER_CONNECTION, after: SHAPES_PER_CONNECTION });
    // Without prepare (DATABASE_URL, maybe PgBouncer) shapes go out as plain text.
    const none = await plain.transaction(async (tx) => {
      await tx.query(shape(1), [1]);
      return (await count(tx)).rows[0]!.n;
    });
    expect(none).toBe(0);
  });
});
