import { randomBytes } from 'node:crypto';
import type { Db } from '../db/types.js';
import { AppError } from '../errors/index.js';
import { sha256Hex } from '../lib/crypto.js';
import type { Aal, AmrEntry, TokenSigner } from './tokens.js';
import * as users from './users.js';
import * as sessions from './sessions.js';
import type { User, UserRow } from './users.js';
import type { AuthContext } from './context.js';
import { refuseBanned } from './ban.js';

export interface SignedIn {
  user: User;
  accessToken: string;
  refreshToken: string;
}

/** A first factor succeeded for a user with an active second factor: no session yet. */
export interface MfaRequired {
  mfaRequired: true;
  challenge: {
    token: string;
    expiresAt: string;
    factors: { id: string; type: 'totp'; friendlyName: string | null }[];
  };
}

export type SignInResult = SignedIn | MfaRequired;

/** How a user proved who they are (the `method` of an `amr` entry). */
export type AuthMethod = 'password' | 'otp' | 'magiclink' | 'oauth' | 'anonymous' | 'totp' | 'recovery';

export const CHALLENGE_TTL_SECONDS = 5 * 60;
export const CHALLENGE_MAX_ATTEMPTS = 5;
const CHALLENGE_TOKEN = /^mfa_[A-Za-z0-9_-]{43}$/;

export const amrEntry = (method: AuthMethod): AmrEntry => ({ method, timestamp: Math.floor(Date.now() / 1000) });

/**
 * Opens sessions and signs their access tokens: the one place that decides, after a first
 * factor, between a session (aal1) and an MFA challenge, and that carries a session's
 * assurance level (`aal`, `amr`) into every token it signs, refreshes included.
 */
export class SessionIssuer {
  constructor(private readonly deps: { db: Db; tokens: TokenSigner; refreshTtlSeconds: number }) {}

  /** After a first factor: a session at aal1, or a challenge when the user has a verified factor. */
  async afterFirstFactor(row: UserRow, ctx: AuthContext, method: AuthMethod): Promise<SignInResult> {
    refuseBanned(row);
    const factors = (row.factors ?? []).filter((f) => f.status === 'verified');
    if (factors.length === 0) return this.open(row, ctx, 'aal1', [amrEntry(method)]);
    const token = `mfa_${randomBytes(32).toString('base64url')}`;
    const { rows } = await this.deps.db.query<{ expires_at: Date | string }>(
      `insert into auth.mfa_challenges (token_hash, user_id, amr, expires_at)
       values ($1, $2, $3::jsonb, now() + make_interval(secs => $4)) returning expires_at`,
      [sha256Hex(token), row.id, JSON.stringify([amrEntry(method)]), CHALLENGE_TTL_SECONDS],
    );
    // Old challenges of this user go now and then (a sign-in is a good moment).
    await this.deps.db.query(
      `delete from auth.mfa_challenges where user_id = $1 and expires_at < now() - interval '1 hour'`,
      [row.id],
    );
    return {
      mfaRequired: true,
      challenge: {
        token,
        expiresAt: new Date(rows[0]!.expires_at).toISOString(),
        factors: factors.map((f) => ({ id: f.id, type: f.type, friendlyName: f.friendlyName })),
      },
    };
  }

  /**
   * Spends one try of a challenge token: its user and first-factor `amr`, or INVALID_CODE
   * when it is unknown, expired, used or out of tries. `settle` is then called with
   * whether the second factor was right; a right one spends the challenge for good.
   */
  async tryChallenge(
    token: string,
  ): Promise<{ userId: string; amr: AmrEntry[]; settle: (ok: boolean) => Promise<boolean> }> {
    const hash = CHALLENGE_TOKEN.test(token) ? sha256Hex(token) : '';
    const { rows } = await this.deps.db.query<{ user_id: string; amr: AmrEntry[] }>(
      `update auth.mfa_challenges set attempts = attempts + 1
       where token_hash = $1 and used_at is null and expires_at > now() and attempts < $2
       returning user_id, amr`,
      [hash, CHALLENGE_MAX_ATTEMPTS],
    );
    const row = rows[0];
    if (!row) {
      throw new AppError('INVALID_CODE', {
        message: 'The MFA challenge is unknown, expired, already used or out of tries.',
        nextActions: 'Sign in again to get a new challenge.',
      });
    }
    const settle = async (ok: boolean): Promise<boolean> => {
      if (!ok) return false;
      const r = await this.deps.db.query(
        'update auth.mfa_challenges set used_at = now() where token_hash = $1 and used_at is null',
        [hash],
      );
      return r.rowCount === 1;
    };
    return { userId: row.user_id, amr: row.amr, settle };
  }

  /** Opens a session at the given level for a user who has proven who they are (and is not banned). */
  async open(row: UserRow, ctx: AuthContext, aal: Aal, amr: AmrEntry[]): Promise<SignedIn> {
    refuseBanned(row);
    await sessions.pruneSessions(this.deps.db, row.id);
    const s = await sessions.openSession(this.deps.db, row.id, this.deps.refreshTtlSeconds, {
      ip: ctx.ip,
      userAgent: ctx.userAgent,
      aal,
      amr,
    });
    const accessToken = await this.accessToken(row, s.sessionId, aal, amr);
    return { user: users.toUser(row), accessToken, refreshToken: s.refreshToken };
  }

  /**
   * Spends a refresh token for a new pair at the session's level. Reusing a spent token ends the
   * session. A banned user's refresh is USER_BANNED (the ban ended the session already).
   */
  async refresh(refreshToken: string): Promise<SignedIn> {
    const r = await sessions.rotateRefreshToken(this.deps.db, refreshToken, this.deps.refreshTtlSeconds);
    if (!r.ok) {
      const owner = r.reason === 'ended' ? await users.userById(this.deps.db, r.userId) : null;
      if (owner) refuseBanned(owner);
      throw new AppError('INVALID_REFRESH_TOKEN', {
        details: r.reason, // read by the auth log (audit.ts): a reused token is an alarm
        message:
          r.reason === 'reused'
            ? 'This refresh token was already used; its session has been ended for safety.'
            : r.reason === 'ended'
              ? 'The session of this refresh token has ended.'
              : 'The refresh token is invalid.',
      });
    }
    const row = await users.userById(this.deps.db, r.userId);
    if (!row)
      throw new AppError('INVALID_REFRESH_TOKEN', { message: 'The user of this refresh token no longer exists.' });
    // A sign-in that raced the ban left a live session: it ends here.
    if (row.banned_until) await sessions.revokeSession(this.deps.db, r.sessionId);
    refuseBanned(row);
    const accessToken = await this.accessToken(row, r.sessionId, r.aal, r.amr);
    return { user: users.toUser(row), accessToken, refreshToken: r.refreshToken };
  }

  private accessToken(row: UserRow, sessionId: string, aal: Aal, amr: AmrEntry[]): Promise<string> {
    return this.deps.tokens.sign({
      sub: row.id,
      email: row.email,
      role: 'authenticated',
      sid: sessionId,
      aal,
      amr,
      isAnonymous: row.is_anonymous === true,
    });
  }
}
