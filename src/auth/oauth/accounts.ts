import type { Db, Queryable } from '../../db/types.js';
import { AppError } from '../../errors/index.js';
import { parseEmail } from '../email.js';
import * as users from '../users.js';
import { revokeUserSessions } from '../sessions.js';
import type { UserRow } from '../users.js';
import type { ProviderProfile } from './providers.js';

import { hasPassword, NO_PASSWORD } from '../providers.js';

/** An identity as the API shows it. */
export interface Identity {
  id: string;
  provider: string;
  email: string | null;
  emailVerified: boolean;
  createdAt: string;
  lastSignInAt: string;
}

interface IdentityRow {
  id: string;
  user_id: string;
  provider: string;
  email: string | null;
  email_verified: boolean;
  created_at: Date | string;
  last_sign_in_at: Date | string;
}

const toIdentity = (r: IdentityRow): Identity => ({
  id: r.id,
  provider: r.provider,
  email: r.email,
  emailVerified: r.email_verified,
  createdAt: new Date(r.created_at).toISOString(),
  lastSignInAt: new Date(r.last_sign_in_at).toISOString(),
});

/** The identities of a user, oldest first. */
export async function listIdentities(db: Queryable, userId: string): Promise<Identity[]> {
  const { rows } = await db.query<IdentityRow>(
    'select id, user_id, provider, email, email_verified, created_at, last_sign_in_at from auth.identities where user_id = $1 order by created_at, id',
    [userId],
  );
  return rows.map(toIdentity);
}

/**
 * The user a provider sign-in belongs to, creating or linking as needed (in one transaction):
 * - a known (provider, subject) is that identity's user;
 * - the provider's email must be a plain address as sign-up accepts it, sent as it is (only
 *   its case may differ): full-width letters, `＠`, spaces are refused (400 OAUTH_EMAIL_INVALID);
 * - else an email the provider verified links to the account with exactly that email. If that
 *   account has a password and its own email was never verified, nothing is linked and the
 *   password is kept (409 OAUTH_LINK_NEEDS_CONSENT): a password is never removed without its
 *   owner's consent (the reset-password code proves the address and verifies it);
 * - an unverified email that matches an account never links (409 OAUTH_EMAIL_NOT_VERIFIED);
 * - else a new account is made, without a password, with the provider's name and picture.
 */
export async function resolveUser(db: Db, provider: string, p: ProviderProfile): Promise<UserRow> {
  try {
    return await db.transaction((tx) => resolveIn(tx, provider, p));
  } catch (err) {
    // Two first sign-ins at once: the loser sees the winner's rows on a second pass.
    if (err instanceof AppError && err.code === 'ALREADY_EXISTS')
      return db.transaction((tx) => resolveIn(tx, provider, p));
    throw err;
  }
}

async function resolveIn(tx: Queryable, provider: string, p: ProviderProfile): Promise<UserRow> {
  const email = providerEmail(p.email);
  const known = await tx.query<{ user_id: string }>(
    `update auth.identities set email = $3, email_verified = $4, last_sign_in_at = now()
     where provider = $1 and subject = $2 returning user_id`,
    [provider, p.subject, email, p.emailVerified],
  );
  if (known.rows[0]) {
    const row = await users.userById(tx, known.rows[0].user_id);
    // The provider has since verified the account's address: so is the account's.
    if (row && p.emailVerified && !row.email_verified && row.email === email)
      return (await users.markEmailVerified(tx, row.id)) ?? row;
    if (row) return row;
  }
  if (email === null) throw new AppError('OAUTH_EMAIL_MISSING');
  let row = await users.userByEmail(tx, email);
  if (row) {
    if (!p.emailVerified) throw new AppError('OAUTH_EMAIL_NOT_VERIFIED');
    if (!row.email_verified) row = await claimUnverifiedAccount(tx, row);
  } else {
    const profile: Record<string, string> = {};
    if (p.name) profile.name = p.name.slice(0, 256);
    if (p.avatarUrl && /^https?:\/\//.test(p.avatarUrl)) profile.avatar_url = p.avatarUrl.slice(0, 2048);
    const { rows } = await tx.query<UserRow>(
      `insert into auth.users (email, password_hash, email_verified, profile) values ($1, $2, $3, $4::jsonb)
       returning ${users.USER_COLUMNS}`,
      [email, NO_PASSWORD, p.emailVerified, JSON.stringify(profile)],
    );
    row = rows[0]!;
  }
  await tx.query(
    'insert into auth.identities (user_id, provider, subject, email, email_verified) values ($1, $2, $3, $4, $5)',
    [row.id, provider, p.subject, email, p.emailVerified],
  );
  return row;
}

/**
 * The provider's email as it may be stored and matched: null when it shares none; refused
 * when it is not the form sign-up would store, i.e. when normalising changed more than its
 * case (NFKC folding of `ｖ` or `＠`, trimmed spaces): a provider proved *that* mailbox, not
 * the one it folds to.
 */
export function providerEmail(raw: string | null): string | null {
  if (raw === null || raw === '') return null;
  let email: string;
  try {
    email = parseEmail(raw);
  } catch {
    throw new AppError('OAUTH_EMAIL_INVALID');
  }
  if (email !== raw.toLowerCase()) throw new AppError('OAUTH_EMAIL_INVALID');
  return email;
}

/**
 * The provider proved the address of an account whose owner never did. Without a password
 * (an account made by an unverified provider sign-in) it is claimed: its sessions end and
 * the email counts as verified. With one, the owner must consent (sign in, or reset it).
 */
async function claimUnverifiedAccount(tx: Queryable, row: UserRow): Promise<UserRow> {
  if (hasPassword(row)) throw new AppError('OAUTH_LINK_NEEDS_CONSENT');
  await revokeUserSessions(tx, row.id, null);
  await tx.query('delete from auth.email_codes where user_id = $1', [row.id]);
  return (await users.markEmailVerified(tx, row.id)) ?? row;
}

/** Removes one of the user's identities, unless it is the last way to sign in. */
export async function unlinkIdentity(db: Db, userId: string, identityId: string): Promise<void> {
  await db.transaction(async (tx) => {
    // Locks the user, so two unlinks at once cannot both remove "one of two".
    const { rows } = await tx.query<{ password_hash: string }>(
      'select password_hash from auth.users where id = $1 for update',
      [userId],
    );
    const user = rows[0];
    const ids = await tx.query<{ id: string }>('select id from auth.identities where user_id = $1', [userId]);
    if (!user || !ids.rows.some((r) => r.id === identityId)) throw new AppError('IDENTITY_NOT_FOUND');
    if (ids.rows.length === 1 && !hasPassword(user)) throw new AppError('LAST_SIGN_IN_METHOD');
    await tx.query('delete from auth.identities where id = $1 and user_id = $2', [identityId, userId]);
  });
}

/** Whether this provider account is already linked to a user (the log tells a new link apart). */
export async function identityExists(db: Queryable, provider: string, subject: string): Promise<boolean> {
  const { rows } = await db.query('select 1 from auth.identities where provider = $1 and subject = $2', [
    provider,
    subject,
  ]);
  return rows.length > 0;
}
