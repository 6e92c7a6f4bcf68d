import type { Queryable } from '../db/types.js';
import { liveSessionSql } from './identity.js';
import { providersOf } from './providers.js';

/** A user as the API shows it. */
export interface User {
  id: string;
  email: string;
  emailVerified: boolean;
  /** `name` and `avatar_url` by convention; any other keys the user set. */
  profile: Record<string, unknown>;
  /** How the user signs in (`email` for a password account). */
  providers: string[];
  createdAt: string;
  updatedAt: string;
  /** Server-side metadata; Plinth keeps none yet, so always null (the SDK's shape has it). */
  metadata: Record<string, unknown> | null;
  /** Signed in anonymously and not converted yet (no email, no password; `email` is ""). */
  isAnonymous: boolean;
  /** The user's MFA factors (never their secrets). */
  factors: FactorSummary[];
  /** Banned until this time (ISO), `"infinity"` until an admin lifts it, null when not banned. */
  bannedUntil: string | null;
  /** The admin's note on a ban (null when not banned or none given). */
  banReason: string | null;
}

/** An MFA factor as users and admins see it. */
export interface FactorSummary {
  id: string;
  type: 'totp';
  friendlyName: string | null;
  status: 'unverified' | 'verified';
  createdAt: string;
}

export interface UserRow {
  id: string;
  email: string;
  password_hash: string;
  email_verified: boolean;
  profile: Record<string, unknown> | null;
  created_at: Date | string;
  updated_at: Date | string;
  identity_providers?: string[] | null;
  is_anonymous?: boolean;
  factors?: FactorSummary[] | null;
  /** A ban in force (USER_COLUMNS drops one that has passed): an ISO time or 'infinity'. */
  banned_until?: string | null;
  ban_reason?: string | null;
}

// An anonymous user has no email: the API shows "" (Supabase's shape), so `email` is a string.
export const USER_COLUMNS =
  "id, coalesce(email, '') as email, password_hash, email_verified, profile, created_at, updated_at, is_anonymous, " +
  'array(select i.provider from auth.identities i where i.user_id = auth.users.id group by i.provider order by min(i.created_at)) as identity_providers, ' +
  "(select coalesce(jsonb_agg(jsonb_build_object('id', f.id, 'type', f.type, 'friendlyName', f.friendly_name, 'status', f.status, " +
  "'createdAt', to_char(f.created_at at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')) order by f.created_at), '[]'::jsonb) " +
  'from auth.mfa_factors f where f.user_id = auth.users.id) as factors, ' +
  "case when banned_until > now() then case when banned_until = 'infinity' then 'infinity' " +
  'else to_char(banned_until at time zone \'UTC\', \'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"\') end end as banned_until, ' +
  'case when banned_until > now() then ban_reason end as ban_reason';

export function toUser(row: UserRow): User {
  return {
    id: row.id,
    email: row.email,
    emailVerified: row.email_verified,
    profile: { ...(row.profile ?? {}) },
    providers: providersOf(row),
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
    metadata: null,
    isAnonymous: row.is_anonymous === true,
    factors: row.factors ?? [],
    bannedUntil: row.banned_until ?? null,
    banReason: row.ban_reason ?? null,
  };
}

export async function userByEmail(db: Queryable, email: string): Promise<UserRow | null> {
  const { rows } = await db.query<UserRow>(`select ${USER_COLUMNS} from auth.users where email = $1`, [email]);
  return rows[0] ?? null;
}

export async function userById(db: Queryable, id: string): Promise<UserRow | null> {
  const { rows } = await db.query<UserRow>(`select ${USER_COLUMNS} from auth.users where id = $1`, [id]);
  return rows[0] ?? null;
}

/** The user of a live session: null when the session ended or the user is gone. */
export async function userOfLiveSession(db: Queryable, id: string, sessionId: string): Promise<UserRow | null> {
  const { rows } = await db.query<UserRow>(
    `select ${USER_COLUMNS} from auth.users where id = $2 and ${liveSessionSql()}`,
    [sessionId, id],
  );
  return rows[0] ?? null;
}

/** Inserts a user; a duplicate email surfaces as ALREADY_EXISTS from the db layer. */
export async function insertUser(
  db: Queryable,
  u: { email: string; passwordHash: string; name: string | null },
): Promise<UserRow> {
  const profile = u.name === null ? {} : { name: u.name };
  const { rows } = await db.query<UserRow>(
    `insert into auth.users (email, password_hash, profile) values ($1, $2, $3::jsonb) returning ${USER_COLUMNS}`,
    [u.email, u.passwordHash, JSON.stringify(profile)],
  );
  return rows[0]!;
}

export async function markEmailVerified(db: Queryable, userId: string): Promise<UserRow | null> {
  const { rows } = await db.query<UserRow>(
    `update auth.users set email_verified = true, updated_at = now() where id = $1 returning ${USER_COLUMNS}`,
    [userId],
  );
  return rows[0] ?? null;
}

export async function setPassword(db: Queryable, userId: string, passwordHash: string): Promise<UserRow | null> {
  const { rows } = await db.query<UserRow>(
    `update auth.users set password_hash = $2, email_verified = true, updated_at = now() where id = $1 returning ${USER_COLUMNS}`,
    [userId, passwordHash],
  );
  return rows[0] ?? null;
}

/** One page of users, oldest first, with the total count. */
export async function listUsers(
  db: Queryable,
  page: { limit: number; offset: number; search: string | null },
): Promise<{ rows: UserRow[]; total: number }> {
  const where = page.search === null ? '' : `where strpos(email, $3) > 0`;
  const params: unknown[] = [page.limit, page.offset];
  if (page.search !== null) params.push(page.search);
  const { rows } = await db.query<UserRow & { total: number }>(
    `select ${USER_COLUMNS}, count(*) over () as total from auth.users ${where}
     order by created_at, id limit $1 offset $2`,
    params,
  );
  let total = rows[0]?.total;
  if (total === undefined) {
    // The page is past the end: count separately so the total is still right.
    const c = await db.query<{ n: number }>(
      `select count(*)::int as n from auth.users ${page.search === null ? '' : 'where strpos(email, $1) > 0'}`,
      page.search === null ? [] : [page.search],
    );
    total = c.rows[0]!.n;
  }
  return { rows, total: Number(total) };
}

/**
 * Merges keys into a user's profile (a null value removes its key); null when the user is gone.
 */
export async function mergeProfile(
  db: Queryable,
  userId: string,
  patch: Record<string, unknown>,
): Promise<UserRow | null> {
  const { rows } = await db.query<UserRow>(
    `update auth.users set profile = jsonb_strip_nulls(profile || $2::jsonb), updated_at = now() where id = $1 returning ${USER_COLUMNS}`,
    [userId, JSON.stringify(patch)],
  );
  return rows[0] ?? null;
}

export async function deleteUser(db: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await db.query('delete from auth.users where id = $1', [id]);
  return rowCount === 1;
}
