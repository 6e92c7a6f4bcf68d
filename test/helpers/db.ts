import pg from 'pg';
import { randomBytes } from 'node:crypto';
import type { Db } from '../../src/db/types.js';
import { databaseRoles } from '../../src/db/owner.js';
import { openPostgres } from '../../src/db/postgres.js';

/**
 * Where tests run: 'embedded' is the default engine (the Postgres server Plinth runs itself,
 * one cluster for the whole run, see embedded-setup.ts); 'postgres' is a server at
 * TEST_DATABASE_URL. PGlite, an explicit opt-in now, has its own smoke test.
 */
export type Backend = 'embedded' | 'postgres';

/** The backends to run HTTP tests on: the embedded server always, server Postgres when TEST_DATABASE_URL is set. */
export function backends(): Backend[] {
  return process.env.TEST_DATABASE_URL ? ['embedded', 'postgres'] : ['embedded'];
}

/** The admin URL of a backend's server (its `postgres` database). */
export function adminUrl(backend: Backend): string {
  const url = backend === 'embedded' ? process.env.PLINTH_TEST_EMBEDDED_URL : process.env.TEST_DATABASE_URL;
  if (!url) {
    throw new Error(
      backend === 'embedded'
        ? 'PLINTH_TEST_EMBEDDED_URL is not set: run tests through vitest (globalSetup test/helpers/embedded-setup.ts starts the cluster).'
        : 'TEST_DATABASE_URL is not set.',
    );
  }
  return url;
}

/** A fresh, empty database on the backend's server; `drop()` removes it again. */
export async function freshDb(backend: Backend): Promise<{ db: Db; url: string; drop: () => Promise<void> }> {
  const admin = adminUrl(backend);
  const name = `plinth_test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  // ICU's root collation on both servers (the embedded cluster's own, and what docs/database.md
  // advises for a server), so text sorts the same way everywhere.
  await withClient(admin, (c) =>
    c.query(`create database ${name} template template0 encoding 'UTF8' locale_provider icu icu_locale 'und'`),
  );
  const u = new URL(admin);
  u.pathname = `/${name}`;
  const url = u.toString();
  // The embedded server prepares the code's hot statements, as in production.
  const db = await openPostgres(url, { max: 5, prepare: backend === 'embedded' });
  return {
    db,
    url,
    drop: async () => {
      await db.close().catch(() => {});
      await withClient(admin, async (c) => {
        await c.query(`drop database if exists ${name} with (force)`);
        // The database's roles (migrations 0140, 0300, 0420) are cluster-wide: they go with it.
        for (const role of databaseRoles(name)) await c.query(`drop role if exists ${role}`);
      });
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
