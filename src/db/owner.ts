import { createHash, randomBytes } from 'node:crypto';
import type { Db } from './types.js';
import { openPostgres } from './postgres.js';

/**
 * The owner role of a database (migration 0140): what the admin API's SQL, table DDL, records
 * and RPC run as. Per database, because roles are cluster-wide and one server may hold many
 * Plinth databases: plinth_owner_ + 12 hex digits of md5(database name).
 */
export function ownerRoleName(database: string): string {
  return `plinth_owner_${createHash('md5').update(database).digest('hex').slice(0, 12)}`;
}

/**
 * The role the triggers Plinth puts on the app's tables run as (migration 0300): NOLOGIN, not a
 * superuser, owning only those trigger functions. Per database, named like the owner role.
 */
export function captureRoleName(database: string): string {
  return `plinth_capture_${createHash('md5').update(database).digest('hex').slice(0, 12)}`;
}

/** The owner's pool, and whether it is a separate, non-superuser login. */
export interface Owner {
  db: Db;
  role: string;
  /** False when Plinth's own user is not a superuser (a managed Postgres) or on PGlite: `db` is then the main pool. */
  separate: boolean;
}

/**
 * Opens the pool that logs in as the owner role, setting its password once (kept in
 * system.credentials, under an advisory lock so instances starting together agree). Plinth's
 * user must be a superuser for a separate role; otherwise (a managed Postgres) that user
 * already lacks superuser rights and is used as it is, as on PGlite (docs/database.md).
 */
export async function openOwner(db: Db, opts: { max?: number } = {}): Promise<Owner> {
  const { rows } = await db.query<{ db: string; user: string; superuser: boolean }>(
    `select current_database() as db, current_user as user, (select rolsuper from pg_roles where rolname = current_user) as superuser`,
  );
  const me = rows[0]!;
  if (!db.connection || !me.superuser) return { db, role: me.user, separate: false };
  const { role, password } = await db.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock(7131)');
    // Idempotent: brings the role back after a carry-over or a restore into a new cluster,
    // and moves to it what the superuser made in public since the last start.
    const named = await tx.query<{ role: string }>('select system.ensure_owner_role() as role');
    const role = named.rows[0]!.role;
    if (role !== ownerRoleName(me.db)) throw new Error(`owner role mismatch: ${role}`);
    const r = await tx.query<{ value: string }>(`select value from system.credentials where name = 'owner_password'`);
    // Hex only, so the literal below cannot break out of its quotes (ALTER ROLE takes no bind
    // parameters). Set at every start to the stored value: instances starting together agree.
    const password = r.rows[0]?.value ?? randomBytes(24).toString('hex');
    if (!/^[0-9a-f]{48}$/.test(password)) throw new Error('system.credentials owner_password is not 48 hex digits');
    await tx.query(`alter role "${role}" password '${password}'`);
    if (!r.rows[0])
      await tx.query(`insert into system.credentials (name, value) values ('owner_password', $1)`, [password]);
    return { role, password };
  });
  const url = new URL(db.connection.url);
  url.username = role;
  url.password = password;
  // The owner's own search_path ("$user", public, plinth_extensions: migration 0300), where the app's SQL runs.
  const owner = await openPostgres(url.toString(), {
    max: opts.max ?? 10,
    prepare: db.connection.prepare,
    searchPath: null,
  });
  return { db: owner, role, separate: true };
}
