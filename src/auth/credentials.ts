import type { Config } from '../config/index.js';
import type { Db, Queryable } from '../db/types.js';
import { randomHex, safeEqual, sha256Hex } from '../lib/crypto.js';

/** The project's credentials, loaded once at start. */
export interface Credentials {
  jwtSecret: string;
  anonKey: string;
  isAdminKey(key: string): boolean;
  isAnonKey(key: string): boolean;
}

export const newAdminKey = () => `ik_${randomHex(32)}`;
export const newAnonKey = () => `anon_${randomHex(32)}`;
const newJwtSecret = () => randomHex(48);

type Name = 'jwt_secret' | 'anon_key' | 'admin_key_sha256';

async function read(db: Queryable): Promise<Partial<Record<Name, string>>> {
  const { rows } = await db.query<{ name: Name; value: string }>('select name, value from system.credentials');
  return Object.fromEntries(rows.map((r) => [r.name, r.value]));
}

async function insertIfMissing(db: Queryable, name: Name, value: string): Promise<boolean> {
  const r = await db.query(
    'insert into system.credentials (name, value) values ($1, $2) on conflict (name) do nothing',
    [name, value],
  );
  return r.rowCount === 1;
}

async function upsert(db: Queryable, name: Name, value: string): Promise<void> {
  await db.query(
    `insert into system.credentials (name, value) values ($1, $2)
     on conflict (name) do update set value = excluded.value, updated_at = now()`,
    [name, value],
  );
}

/**
 * Loads the credentials, generating and persisting any that are missing (several instances
 * starting at once agree on one value). Env overrides win. Returns the admin key in clear
 * text only when this call generated it, so the caller can print it once.
 */
export async function loadCredentials(
  db: Db,
  overrides: Config['credentials'],
): Promise<{ credentials: Credentials; generatedAdminKey: string | null }> {
  let generatedAdminKey: string | null = null;
  const adminCandidate = newAdminKey();
  await insertIfMissing(db, 'jwt_secret', newJwtSecret());
  await insertIfMissing(db, 'anon_key', newAnonKey());
  if (!overrides.adminApiKey && (await insertIfMissing(db, 'admin_key_sha256', sha256Hex(adminCandidate)))) {
    generatedAdminKey = adminCandidate;
  }
  const stored = await read(db);
  const jwtSecret = overrides.jwtSecret ?? stored.jwt_secret!;
  const anonKey = overrides.anonKey ?? stored.anon_key!;
  const adminHash = overrides.adminApiKey ? sha256Hex(overrides.adminApiKey) : stored.admin_key_sha256!;
  return {
    generatedAdminKey,
    credentials: Object.freeze({
      jwtSecret,
      anonKey,
      isAdminKey: (key: string) => safeEqual(sha256Hex(key), adminHash),
      isAnonKey: (key: string) => safeEqual(key, anonKey),
    }),
  };
}

/** Replaces the admin key; returns the new key, which is shown once and stored only as a hash. */
export async function rotateAdminKey(db: Db): Promise<string> {
  const key = newAdminKey();
  await upsert(db, 'admin_key_sha256', sha256Hex(key));
  return key;
}

export async function rotateAnonKey(db: Db): Promise<string> {
  const key = newAnonKey();
  await upsert(db, 'anon_key', key);
  return key;
}

/** Replaces the JWT secret: every access token issued so far stops working. */
export async function rotateJwtSecret(db: Db): Promise<void> {
  await upsert(db, 'jwt_secret', newJwtSecret());
}

export async function storedAnonKey(db: Db): Promise<string | null> {
  return (await read(db)).anon_key ?? null;
}
