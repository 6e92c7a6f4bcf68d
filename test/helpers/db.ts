import pg from 'pg';
import { randomBytes } from 'node:crypto';
import type { Db } from '../../src/db/types.js';
import { openPglite } from '../../src/db/pglite.js';
import { openPostgres } from '../../src/db/postgres.js';

export type Backend = 'pglite' | 'postgres';

/** The backends to run HTTP tests on: PGlite always, server Postgres when TEST_DATABASE_URL is set. */
export function backends(): Backend[] {
  return process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];
}

/** A fresh, empty database of the given kind; `drop()` removes it again. */
export async function freshDb(backend: Backend): Promise<{ db: Db; url: string | null; drop: () => Promise<void> }> {
  if (backend === 'pglite') {
    const db = await openPglite(null);
    return { db, url: null, drop: () => db.close() };
  }
  const admin = process.env.TEST_DATABASE_URL!;
  const name = `plinth_test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  await withClient(admin, (c) => c.query(`create database ${name}`));
  const u = new URL(admin);
  u.pathname = `/${name}`;
  const url = u.toString();
  const db = await openPostgres(url, { max: 5 });
  return {
    db,
    url,
    drop: async () => {
      await db.close().catch(() => {});
      await withClient(admin, (c) => c.query(`drop database if exists ${name} with (force)`));
    },
  };
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}
