import { createHmac, randomInt } from 'node:crypto';
import type { Queryable } from '../db/types.js';
import { safeEqual } from '../lib/crypto.js';

/**
 * verify_email, reset_password, sign_in: 6-digit codes mailed to the user. reset_token: the
 * one-time token a reset code is exchanged for (InsForge's two-step reset), stored the same way.
 */
export type CodePurpose = 'verify_email' | 'reset_password' | 'sign_in' | 'reset_token' | 'magic_link';

export const CODE_TTL_SECONDS = 15 * 60;
export const CODE_MAX_ATTEMPTS = 5;

/**
 * Six-digit one-time codes sent by email. Stored as an HMAC keyed with the server secret
 * (a database dump alone cannot be brute-forced back to codes), one live code per user and
 * purpose, 15 minutes, 5 attempts.
 */
export class EmailCodes {
  private readonly key: Buffer;
  constructor(secret: string) {
    this.key = Buffer.from(`email-code:${secret}`);
  }

  private hmac(userId: string, purpose: CodePurpose, code: string): string {
    return createHmac('sha256', this.key).update(`${userId}:${purpose}:${code}`).digest('hex');
  }

  /**
   * Issues a fresh code for the user and purpose, replacing any earlier one: 6 random digits,
   * or `given` (a long random token made by the caller).
   */
  async issue(db: Queryable, userId: string, purpose: CodePurpose, given?: string): Promise<string> {
    const code = given ?? String(randomInt(0, 1_000_000)).padStart(6, '0');
    await db.query(
      `insert into auth.email_codes (user_id, purpose, code_hmac, expires_at)
       values ($1, $2, $3, now() + make_interval(secs => $4))
       on conflict (user_id, purpose) do update
         set code_hmac = excluded.code_hmac, attempts = 0, created_at = now(), expires_at = excluded.expires_at`,
      [userId, purpose, this.hmac(userId, purpose, code), CODE_TTL_SECONDS],
    );
    return code;
  }

  /** Voids every code of the user (after a password reset, no older code may open a session). */
  async revokeAll(db: Queryable, userId: string): Promise<void> {
    await db.query('delete from auth.email_codes where user_id = $1', [userId]);
  }

  /**
   * Checks a code. Every check first spends one attempt in a single statement (so parallel
   * guesses cannot exceed the limit); a right code is then deleted so it works once.
   */
  async consume(db: Queryable, userId: string, purpose: CodePurpose, code: string): Promise<boolean> {
    const { rows } = await db.query<{ code_hmac: string }>(
      `update auth.email_codes set attempts = attempts + 1
       where user_id = $1 and purpose = $2 and attempts < $3 and expires_at > now()
       returning code_hmac`,
      [userId, purpose, CODE_MAX_ATTEMPTS],
    );
    const stored = rows[0]?.code_hmac;
    if (!stored || !safeEqual(stored, this.hmac(userId, purpose, code))) return false;
    const del = await db.query('delete from auth.email_codes where user_id = $1 and purpose = $2 and code_hmac = $3', [
      userId,
      purpose,
      stored,
    ]);
    return del.rowCount === 1;
  }
}
