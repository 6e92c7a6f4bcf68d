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
  const role = ownerRoleName(me.db);
  const password = await db.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock(7131)');
    const r = await tx.query<{ value: string }>(`select value from system.credentials where name = 'owner_password'`);
    if (r.rows[0]) return r.rows[0].value;
    // Hex only, so the literal below cannot break out of its quotes (ALTER ROLE takes no bind parameters).
    const fresh = randomBytes(24).toString('hex');
    await tx.query(`alter role "${role}" password '${fresh}'`);
    await tx.query(`insert into system.credentials (name, value) values ('owner_password', $1)`, [fresh]);
    return fresh;
  });
  const url = new URL(db.connection.url);
  url.username = role;
  url.password = password;
  const owner = await openPostgres(url.toString(), { max: opts.max ?? 10, prepare: db.connection.prepare });
  return { db: owner, role, separate: true };
}
