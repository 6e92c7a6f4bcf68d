// Statements of fixed text (db/types.ts `statement`) are prepared once per connection on the
// embedded server, and sent as plain text where a pooler may sit in between (DATABASE_URL).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/db/postgres.js';
import { statement, type Db } from '../../src/db/types.js';
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
});
