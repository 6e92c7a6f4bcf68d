import type { Db } from '../db/types.js';
import { AppError } from '../errors/index.js';
import type { LogWriter } from '../logs/index.js';
import { applyBan, banOf, type BanChange } from './ban.js';
import * as users from './users.js';

export interface SessionSummary {
  id: string;
  createdAt: string;
  expiresAt: string;
  ip: string | null;
  userAgent: string | null;
}

export interface IdentitySummary {
  provider: string;
  email: string | null;
  lastSignInAt: string;
}

const iso = (d: Date | string) => new Date(d).toISOString();

/**
 * What an admin sees and changes of one user beyond the user itself (the dashboard's user
 * panel, on Plinth's own connection: admin SQL runs as the owner role, which may not read
 * auth's tables): the live sessions, the sign-in identities, the name, the verified mark and
 * the ban (written to the auth log).
 */
export class UserAdmin {
  constructor(
    private readonly db: Db,
    private readonly logs: LogWriter,
  ) {}

  private async existing(id: string): Promise<void> {
    if (!(await users.userById(this.db, id))) throw new AppError('USER_NOT_FOUND');
  }

  async sessions(id: string): Promise<SessionSummary[]> {
    await this.existing(id);
    const { rows } = await this.db.query<{
      id: string;
      created_at: Date;
      expires_at: Date;
      ip: string | null;
      user_agent: string | null;
    }>(
      `select id, created_at, expires_at, ip, user_agent from auth.sessions
        where user_id = $1 and revoked_at is null and expires_at > now() order by created_at desc limit 100`,
      [id],
    );
    return rows.map((r) => ({
      id: r.id,
      createdAt: iso(r.created_at),
      expiresAt: iso(r.expires_at),
      ip: r.ip,
      userAgent: r.user_agent,
    }));
  }

  async identities(id: string): Promise<IdentitySummary[]> {
    await this.existing(id);
    const { rows } = await this.db.query<{ provider: string; email: string | null; last_sign_in_at: Date }>(
      'select provider, email, last_sign_in_at from auth.identities where user_id = $1 order by created_at',
      [id],
    );
    return rows.map((r) => ({ provider: r.provider, email: r.email, lastSignInAt: iso(r.last_sign_in_at) }));
  }

  /**
   * Sets the profile's name, marks the email verified (never unverifies), bans or lifts a ban
   * (see ban.ts), all at once; answers the user.
   */
  async update(id: string, input: { name?: string; emailVerified?: true } & BanChange): Promise<users.User> {
    const ban = banOf(input);
    await this.existing(id);
    await this.db.transaction(async (tx) => {
      if (input.emailVerified) await users.markEmailVerified(tx, id);
      if (input.name !== undefined) await users.mergeProfile(tx, id, { name: input.name });
      if (ban !== undefined) await applyBan(tx, id, ban);
    });
    if (ban)
      this.logs.write('auth', 'info', 'user banned', { userId: id, until: ban.until, reason: ban.reason, by: 'admin' });
    else if (ban === null) this.logs.write('auth', 'info', 'user unbanned', { userId: id, by: 'admin' });
    return users.toUser((await users.userById(this.db, id))!);
  }
}
