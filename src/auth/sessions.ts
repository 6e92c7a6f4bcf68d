import { randomBytes } from 'node:crypto';
import type { Db, Queryable } from '../db/types.js';
import { sha256Hex } from '../lib/crypto.js';
import type { Aal, AmrEntry } from './tokens.js';

/** Opaque refresh tokens: 256 random bits; only their SHA-256 is stored. */
const newRefreshToken = () => `rt_${randomBytes(32).toString('base64url')}`;
const REFRESH_TOKEN = /^rt_[A-Za-z0-9_-]{43}$/;

export interface NewSession {
  sessionId: string;
  refreshToken: string;
}

export interface SessionMeta {
  ip: string | null;
  userAgent: string | null;
  /** The assurance level and the methods behind it; every refresh keeps them. */
  aal: Aal;
  amr: AmrEntry[];
}

/** Opens a session for a user, valid for `ttlSeconds` (extended on each refresh). */
export async function openSession(db: Db, userId: string, ttlSeconds: number, meta: SessionMeta): Promise<NewSession> {
  const refreshToken = newRefreshToken();
  const sessionId = await db.transaction(async (tx) => {
    const { rows } = await tx.query<{ id: string }>(
      `insert into auth.sessions (user_id, expires_at, ip, user_agent, aal, amr)
       values ($1, now() + make_interval(secs => $2), $3, $4, $5, $6::jsonb) returning id`,
      [userId, ttlSeconds, meta.ip, meta.userAgent?.slice(0, 512) ?? null, meta.aal, JSON.stringify(meta.amr)],
    );
    const id = rows[0]!.id;
    await tx.query('insert into auth.refresh_tokens (token_hash, session_id) values ($1, $2)', [
      sha256Hex(refreshToken),
      id,
    ]);
    return id;
  });
  return { sessionId, refreshToken };
}

export type RotateResult =
  | { ok: true; sessionId: string; userId: string; refreshToken: string; aal: Aal; amr: AmrEntry[] }
  | { ok: false; reason: 'unknown' | 'reused' }
  | { ok: false; reason: 'ended'; userId: string };

/**
 * Spends a refresh token and issues its successor, extending the session. A token that was
 * already spent revokes its session (someone else holds a copy). One statement claims the
 * token, so two concurrent uses cannot both succeed.
 */
export async function rotateRefreshToken(db: Db, token: string, ttlSeconds: number): Promise<RotateResult> {
  if (!REFRESH_TOKEN.test(token)) return { ok: false, reason: 'unknown' };
  const hash = sha256Hex(token);
  const next = newRefreshToken();
  const result = await db.transaction(async (tx): Promise<RotateResult> => {
    const claimed = await tx.query<{ session_id: string; user_id: string; live: boolean; aal: Aal; amr: AmrEntry[] }>(
      `update auth.refresh_tokens rt set used_at = now()
       from auth.sessions s
       where rt.token_hash = $1 and rt.used_at is null and s.id = rt.session_id
       returning rt.session_id, s.user_id, (s.revoked_at is null and s.expires_at > now()) as live, s.aal, s.amr`,
      [hash],
    );
    const row = claimed.rows[0];
    if (!row) return { ok: false, reason: 'unknown' };
    if (!row.live) return { ok: false, reason: 'ended', userId: row.user_id };
    await tx.query('insert into auth.refresh_tokens (token_hash, session_id) values ($1, $2)', [
      sha256Hex(next),
      row.session_id,
    ]);
    await tx.query(
      `update auth.sessions set refreshed_at = now(), expires_at = now() + make_interval(secs => $2) where id = $1`,
      [row.session_id, ttlSeconds],
    );
    return { ok: true, sessionId: row.session_id, userId: row.user_id, refreshToken: next, aal: row.aal, amr: row.amr };
  });
  if (result.ok || result.reason !== 'unknown') return result;
  // Not claimable: either never issued, or already spent. A spent one ends its session.
  const { rows } = await db.query<{ id: string }>(
    `update auth.sessions set revoked_at = coalesce(revoked_at, now())
     where id = (select session_id from auth.refresh_tokens where token_hash = $1 and used_at is not null)
     returning id`,
    [hash],
  );
  return rows.length ? { ok: false, reason: 'reused' } : result;
}

/** The live session a refresh token (spent or not) belongs to, without spending it. */
export async function sessionOfRefreshToken(
  db: Queryable,
  token: string,
): Promise<{ sessionId: string; userId: string } | null> {
  if (!REFRESH_TOKEN.test(token)) return null;
  const { rows } = await db.query<{ id: string; user_id: string }>(
    `select s.id, s.user_id from auth.refresh_tokens rt join auth.sessions s on s.id = rt.session_id
     where rt.token_hash = $1 and rt.used_at is null and s.revoked_at is null and s.expires_at > now()`,
    [sha256Hex(token)],
  );
  return rows[0] ? { sessionId: rows[0].id, userId: rows[0].user_id } : null;
}

/** Ends one session: its access tokens stop working at once, its refresh token too. */
export async function revokeSession(db: Queryable, sessionId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    'update auth.sessions set revoked_at = now() where id = $1 and revoked_at is null',
    [sessionId],
  );
  return rowCount === 1;
}

/** Ends one session of a given user (ids from a token: a non-uuid matches nothing). */
export async function revokeSessionOf(db: Queryable, sessionId: string, userId: string): Promise<void> {
  await db.query(
    `update auth.sessions set revoked_at = now()
     where id::text = $1 and user_id::text = $2 and revoked_at is null`,
    [sessionId, userId],
  );
}

/** Ends every session of a user except `keep` (if given). */
export async function revokeUserSessions(db: Queryable, userId: string, keep: string | null): Promise<number> {
  const { rowCount } = await db.query(
    `update auth.sessions set revoked_at = now()
     where user_id = $1 and revoked_at is null and ($2::uuid is null or id <> $2::uuid)`,
    [userId, keep],
  );
  return rowCount;
}

/** Deletes a user's sessions that ended over a day ago (with their refresh tokens). */
export async function pruneSessions(db: Queryable, userId: string): Promise<void> {
  await db.query(
    `delete from auth.sessions where user_id = $1
     and (expires_at < now() - interval '1 day' or revoked_at < now() - interval '1 day')`,
    [userId],
  );
}
