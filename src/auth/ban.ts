import type { Queryable } from '../db/types.js';
import { AppError } from '../errors/index.js';
import { revokeUserSessions } from './sessions.js';
import type { UserRow } from './users.js';

/** What an admin asks of a user's ban: `banned: false` lifts it; until and reason go with `banned: true`. */
export interface BanChange {
  banned?: boolean;
  /** An ISO time in the future; without it the ban lasts until lifted. */
  bannedUntil?: string;
  banReason?: string;
}

/** The ban an admin sets: until a time (ISO) or 'infinity', with an optional note; null lifts it. */
export type Ban = { until: string; reason: string | null } | null;

/**
 * Refuses a user whose ban is in force (USER_COLUMNS already drops one that has passed). Every
 * path that opens a session or a sign-in challenge calls it, after the credential was checked:
 * only someone who proved to be the user learns of the ban.
 */
export function refuseBanned(row: UserRow): void {
  const until = row.banned_until;
  if (!until) return;
  throw new AppError('USER_BANNED', {
    message: until === 'infinity' ? 'This account is banned indefinitely.' : `This account is banned until ${until}.`,
  });
}

/** The ban a change asks for: undefined when it leaves the ban as it is; INVALID_INPUT when it makes no sense. */
export function banOf(change: BanChange, now = Date.now()): Ban | undefined {
  if (change.banned === undefined) {
    if (change.bannedUntil === undefined && change.banReason === undefined) return undefined;
    throw new AppError('INVALID_INPUT', {
      message: 'bannedUntil and banReason go with banned: true.',
      nextActions: 'Send {"banned": true, "bannedUntil": "<ISO time>", "banReason": "…"}.',
    });
  }
  if (!change.banned) {
    if (change.bannedUntil !== undefined || change.banReason !== undefined) {
      throw new AppError('INVALID_INPUT', {
        message: 'An unban takes no bannedUntil or banReason.',
        nextActions: 'Send {"banned": false} alone.',
      });
    }
    return null;
  }
  const reason = change.banReason?.trim() || null;
  if (change.bannedUntil === undefined) return { until: 'infinity', reason };
  const at = Date.parse(change.bannedUntil);
  if (!Number.isFinite(at) || at <= now) {
    throw new AppError('INVALID_INPUT', {
      message: 'bannedUntil must be a time in the future (ISO 8601 with a time zone).',
      nextActions:
        'Send a later time such as "2030-01-01T00:00:00Z", or leave bannedUntil out to ban until the ban is lifted.',
    });
  }
  return { until: new Date(at).toISOString(), reason };
}

/** Sets or lifts a user's ban; a ban ends every session at once (access and refresh tokens stop working). */
export async function applyBan(tx: Queryable, userId: string, ban: Ban): Promise<void> {
  await tx.query(
    'update auth.users set banned_until = $2::timestamptz, ban_reason = $3, updated_at = now() where id = $1',
    [userId, ban?.until ?? null, ban?.reason ?? null],
  );
  if (ban) await revokeUserSessions(tx, userId, null);
}
