import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import type { Db } from './types.js';

export const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

export interface Migration {
  id: string;
  name: string;
  sql: string;
}

/** Reads `NNNN_name.sql` files in order; a malformed name or a duplicate prefix is an error. */
export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const files = readdirSync(dir).filter((f) => f.endsWith('.sql')).sort();
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
    const { rows } = await tx.query<{ id: string }>('select id from system.migrations');
    const done = new Set(rows.map((r) => r.id));
    const applied: string[] = [];
    for (const m of migrations) {
      if (done.has(m.id)) continue;
      await tx.exec(m.sql);
      await tx.query('insert into system.migrations (id, name) values ($1, $2)', [m.id, m.name]);
      applied.push(m.id);
    }
    return applied;
  });
}
