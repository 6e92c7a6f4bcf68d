import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { codePath } from '../lib/code-dir.js';
import type { Db, Queryable } from './types.js';

export const MIGRATIONS_DIR = codePath('db', 'migrations');

export interface Migration {
  id: string;
  name: string;
  sql: string;
}

/** Reads `NNNN_name.sql` files in order; a malformed name or a duplicate prefix is an error. */
export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort();
  const seen = new Set<string>();
  return files.map((file) => {
    const m = /^(\d{4})_([a-z0-9_]+)\.sql$/.exec(file);
    if (!m) throw new Error(`Migration file name must be NNNN_name.sql: ${file}`);
    const id = m[1]!;
    if (seen.has(id)) throw new Error(`Duplicate migration prefix ${id}: ${file}`);
    seen.add(id);
    return { id, name: m[2]!, sql: readFileSync(path.join(dir, file), 'utf8') };
  });
}

/**
 * Applies the pending migrations in one transaction under an advisory lock, so several
 * instances starting together apply each migration once. Forward-only; returns the ids applied.
 */
export async function migrate(db: Db, migrations = readMigrations()): Promise<string[]> {
  return db.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock(7130)');
    await tx.exec(`
      create schema if not exists system;
      create table if not exists system.migrations (
        id text primary key,
        name text not null,
        applied_at timestamptz not null default now()
      );`);
    // Plinth's migrations run as a superuser on the embedded server: the schema an unqualified
    // name resolves in must not be one the owner role controls (public), nor may a schema a
    // migration creates be one the owner made first (docs/security.md).
    await tx.query(`select set_config('search_path', 'pg_catalog, pg_temp', true)`);
    const { rows } = await tx.query<{ id: string }>('select id from system.migrations');
    const done = new Set(rows.map((r) => r.id));
    const applied: string[] = [];
    for (const m of migrations) {
      if (done.has(m.id)) continue;
      await refuseForeignSchemas(tx, m);
      await tx.exec(m.sql);
      await tx.query('insert into system.migrations (id, name) values ($1, $2)', [m.id, m.name]);
      applied.push(m.id);
    }
    return applied;
  });
}

/**
 * A schema a migration creates (`create schema if not exists x`) that exists already must be
 * Plinth's own (owned by this connection's user): one the owner role made first would hold
 * the migration's objects, and its functions and operators could stand in for the ones the
 * migration means, run by a superuser.
 */
async function refuseForeignSchemas(tx: Queryable, m: Migration): Promise<void> {
  const names = [...m.sql.matchAll(/create\s+schema\s+if\s+not\s+exists\s+([a-z_][a-z0-9_]*)/gi)].map((x) =>
    x[1]!.toLowerCase(),
  );
  if (!names.length) return;
  const { rows } = await tx.query<{ name: string; owner: string }>(
    `select n.nspname as name, pg_get_userbyid(n.nspowner) as owner from pg_namespace n
      where n.nspname = any($1::text[]) and n.nspowner <> (select oid from pg_roles where rolname = current_user)`,
    [names],
  );
  if (rows[0]) {
    throw new Error(
      `Migration ${m.id}_${m.name} creates schema "${rows[0].name}", which exists and belongs to role "${rows[0].owner}", not to Plinth's user: drop or rename that schema, then start again.`,
    );
  }
}
