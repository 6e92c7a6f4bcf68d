import { createHash, randomBytes } from 'node:crypto';
import type { Db, Queryable } from './types.js';
import { openPostgres } from './postgres.js';
import { ownerState, storeOwnerState, storedOwnerState } from './owner-state.js';

const tag = (database: string) => createHash('md5').update(database).digest('hex').slice(0, 12);

/**
 * The owner role of a database (migration 0140): what the admin API's SQL, table DDL, records
 * and RPC run as. Per database, because roles are cluster-wide and one server may hold many
 * Plinth databases: plinth_owner_ + 12 hex digits of md5(database name).
 */
export function ownerRoleName(database: string): string {
  return `plinth_owner_${tag(database)}`;
}

/**
 * The role the triggers Plinth puts on the app's tables run as (migration 0300): NOLOGIN, not a
 * superuser, owning only those trigger functions. Per database, named like the owner role.
 */
export function captureRoleName(database: string): string {
  return `plinth_capture_${tag(database)}`;
}

/**
 * The login the transactions of users and the anon key run on (migration 0420): no privilege
 * of its own, NOINHERIT, a member of anon and authenticated. Per database, named like the owner role.
 */
export function authenticatorRoleName(database: string): string {
  return `plinth_authenticator_${tag(database)}`;
}

/** Every role Plinth makes for a database (cluster-wide): what goes when that database is dropped. */
export function databaseRoles(database: string): string[] {
  return [ownerRoleName(database), captureRoleName(database), authenticatorRoleName(database)];
}

/** The owner's pool, and whether it is a separate, non-superuser login. */
export interface Owner {
  /** The owner role's pool; its `callers` is the authenticator's pool when there is one. */
  db: Db;
  role: string;
  /** False when Plinth's own user is not a superuser (a managed Postgres) or on PGlite: `db` is then the main pool. */
  separate: boolean;
}

/**
 * Sets a login role's password to the one kept in system.credentials under `name` (made on
 * first use). Set to the stored value whenever the roles are ensured, so instances starting
 * together agree (the caller holds the advisory lock).
 */
async function loginPassword(tx: Queryable, role: string, name: string): Promise<string> {
  const r = await tx.query<{ value: string }>(`select value from system.credentials where name = $1`, [name]);
  // Hex only, so the literal below cannot break out of its quotes (ALTER ROLE takes no bind parameters).
  const password = r.rows[0]?.value ?? randomBytes(24).toString('hex');
  if (!/^[0-9a-f]{48}$/.test(password)) throw new Error(`system.credentials ${name} is not 48 hex digits`);
  if (!/^plinth_[a-z]+_[0-9a-f]{12}$/.test(role)) throw new Error(`unexpected role name: ${role}`);
  await tx.query(`alter role "${role}" password '${password}'`);
  if (!r.rows[0]) await tx.query(`insert into system.credentials (name, value) values ($1, $2)`, [name, password]);
  return password;
}

/** `url` logged in as `role`. */
function loginUrl(url: string, role: string, password: string): string {
  const u = new URL(url);
  u.username = role;
  u.password = password;
  return u.toString();
}

/** The stored password of `name` (owner_password, authenticator_password), when there is one. */
async function storedPassword(tx: Queryable, name: string): Promise<string | null> {
  const r = await tx.query<{ value: string }>(`select value from system.credentials where name = $1`, [name]);
  return r.rows[0]?.value ?? null;
}

/**
 * The owner and authenticator roles as Plinth needs them, and their logins. Idempotent: brings
 * the roles back after a carry-over or a restore into a new cluster, and moves to the owner what
 * the superuser made in public since the last start. Skipped (the logins read as stored) when
 * the catalogue is as the last start left it (db/owner-state.ts). The caller's transaction
 * holds an advisory lock, so instances starting together agree.
 */
async function ensureRoles(
  tx: Queryable,
  url: string,
  database: string,
): Promise<{ owner: string; authenticator: string; role: string }> {
  await tx.query('select pg_advisory_xact_lock(7131)');
  const [owner, authenticator] = [ownerRoleName(database), authenticatorRoleName(database)];
  const roles = [owner, captureRoleName(database), authenticator];
  const stored = await storedOwnerState(tx);
  const [ownerPassword, authenticatorPassword] = [
    await storedPassword(tx, 'owner_password'),
    await storedPassword(tx, 'authenticator_password'),
  ];
  if (stored && ownerPassword && authenticatorPassword && stored === (await ownerState(tx, roles))) {
    return {
      owner: loginUrl(url, owner, ownerPassword),
      authenticator: loginUrl(url, authenticator, authenticatorPassword),
      role: owner,
    };
  }
  const named = await tx.query<{ owner: string; authenticator: string }>(
    'select system.ensure_owner_role() as owner, system.ensure_authenticator_role() as authenticator',
  );
  if (named.rows[0]!.owner !== owner) throw new Error(`owner role mismatch: ${named.rows[0]!.owner}`);
  if (named.rows[0]!.authenticator !== authenticator)
    throw new Error(`authenticator mismatch: ${named.rows[0]!.authenticator}`);
  const logins = {
    owner: loginUrl(url, owner, await loginPassword(tx, owner, 'owner_password')),
    authenticator: loginUrl(url, authenticator, await loginPassword(tx, authenticator, 'authenticator_password')),
    role: owner,
  };
  await storeOwnerState(tx, await ownerState(tx, roles));
  return logins;
}

/**
 * Opens the pool that logs in as the owner role and, beside it, the authenticator's pool for
 * the callers' transactions (src/database/caller.ts), setting their passwords once (kept in
 * system.credentials, under an advisory lock so instances starting together agree). Plinth's
 * user must be a superuser for separate roles; otherwise (a managed Postgres) that user
 * already lacks superuser rights and is used as it is, as on PGlite, and callers' transactions
 * run on it with the `begin` answered first (docs/database.md). The one place that decides.
 */
export async function openOwner(db: Db, opts: { max?: number; callersMax?: number } = {}): Promise<Owner> {
  const { rows } = await db.query<{ db: string; user: string; superuser: boolean }>(
    `select current_database() as db, current_user as user, (select rolsuper from pg_roles where rolname = current_user) as superuser`,
  );
  const me = rows[0]!;
  if (!db.connection || !me.superuser) return { db, role: me.user, separate: false };
  const logins = await db.transaction((tx) => ensureRoles(tx, db.connection!.url, me.db));
  const prepare = db.connection.prepare;
  // The owner's own search_path ("$user", public, plinth_extensions: migration 0300), where the app's SQL runs.
  const owner = await openPostgres(logins.owner, { max: opts.max ?? 4, prepare, searchPath: null });
  // Its role's search_path and timeout (migration 0420); connections open when callers come.
  const callers = await openPostgres(logins.authenticator, {
    max: opts.callersMax ?? 8,
    prepare,
    searchPath: null,
    authenticator: true,
  });
  const close = async () => {
    await Promise.all([owner.close(), callers.close()]);
  };
  return { db: { ...owner, callers, close }, role: logins.role, separate: true };
}
