import type { Db, Queryable } from '../db/types.js';

/** One TOTP factor row (the secret still encrypted). */
export interface FactorRow {
  id: string;
  user_id: string;
  type: 'totp';
  friendly_name: string | null;
  secret_enc: string;
  status: 'unverified' | 'verified';
  last_step: string | number;
  created_at: Date | string;
}

const COLUMNS = 'id, user_id, type, friendly_name, secret_enc, status, last_step, created_at';
/** At most this many factors per user (verified or not). */
export const MAX_FACTORS = 10;

export async function factorOf(db: Queryable, userId: string, factorId: string): Promise<FactorRow | null> {
  const { rows } = await db.query<FactorRow>(
    `select ${COLUMNS} from auth.mfa_factors where id::text = $1 and user_id = $2`,
    [factorId, userId],
  );
  return rows[0] ?? null;
}

export async function verifiedFactors(db: Queryable, userId: string): Promise<FactorRow[]> {
  const { rows } = await db.query<FactorRow>(
    `select ${COLUMNS} from auth.mfa_factors where user_id = $1 and status = 'verified' order by created_at`,
    [userId],
  );
  return rows;
}

/**
 * Adds an unverified factor; the user's other unverified ones go (an abandoned enrolment
 * never piles up). Null when the user already has MAX_FACTORS verified factors.
 */
export async function insertFactor(
  db: Queryable,
  f: { userId: string; friendlyName: string | null; secretEnc: string },
): Promise<FactorRow | null> {
  await db.query(`delete from auth.mfa_factors where user_id = $1 and status = 'unverified'`, [f.userId]);
  const { rows } = await db.query<FactorRow>(
    `insert into auth.mfa_factors (user_id, friendly_name, secret_enc)
     select $1, $2, $3 where (select count(*) from auth.mfa_factors where user_id = $1) < $4
     returning ${COLUMNS}`,
    [f.userId, f.friendlyName, f.secretEnc, MAX_FACTORS],
  );
  return rows[0] ?? null;
}

/**
 * Accepts a code of time step `step` for a factor: only for a step later than the last one
 * accepted (one statement, so two uses of one code cannot both win). Marks the factor
 * verified. Whether it was accepted.
 */
export async function acceptStep(db: Queryable, factorId: string, step: number): Promise<boolean> {
  const { rowCount } = await db.query(
    `update auth.mfa_factors set last_step = $2, status = 'verified', updated_at = now()
     where id = $1 and last_step < $2`,
    [factorId, step],
  );
  return rowCount === 1;
}

export async function deleteFactor(db: Queryable, factorId: string): Promise<void> {
  await db.query('delete from auth.mfa_factors where id = $1', [factorId]);
}

/** Replaces the user's recovery codes with new ones (HMACs). */
export async function replaceRecoveryCodes(db: Queryable, userId: string, hmacs: string[]): Promise<void> {
  await db.query('delete from auth.mfa_recovery_codes where user_id = $1', [userId]);
  await db.query('insert into auth.mfa_recovery_codes (user_id, code_hmac) select $1, unnest($2::text[])', [
    userId,
    hmacs,
  ]);
}

/**
 * Stores recovery codes for a user who has none (the first activation); false when the user
 * has some already. Locks the user row, so two activations at once cannot both store a set.
 */
export async function addFirstRecoveryCodes(db: Db, userId: string, hmacs: string[]): Promise<boolean> {
  return db.transaction(async (tx) => {
    await tx.query('select 1 from auth.users where id = $1 for update', [userId]);
    const { rows } = await tx.query('select 1 from auth.mfa_recovery_codes where user_id = $1 limit 1', [userId]);
    if (rows.length) return false;
    await replaceRecoveryCodes(tx, userId, hmacs);
    return true;
  });
}

/** Spends a recovery code: true once, then never again. */
export async function useRecoveryCode(db: Queryable, userId: string, hmac: string): Promise<boolean> {
  const { rowCount } = await db.query(
    'update auth.mfa_recovery_codes set used_at = now() where user_id = $1 and code_hmac = $2 and used_at is null',
    [userId, hmac],
  );
  return rowCount === 1;
}

/** Removes every factor, recovery code and open challenge of a user; how many factors went. */
export async function resetUser(db: Queryable, userId: string): Promise<number> {
  const { rowCount } = await db.query('delete from auth.mfa_factors where user_id = $1', [userId]);
  await db.query('delete from auth.mfa_recovery_codes where user_id = $1', [userId]);
  await db.query('delete from auth.mfa_challenges where user_id = $1', [userId]);
  return rowCount;
}
