import type { Queryable } from '../db/types.js';
import { AppError } from '../errors/index.js';
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
 * auth's tables): the live sessions, the sign-in identities, the name and the verified mark.
 */
export class UserAdmin {
  constructor(private readonly db: Queryable) {}

  private async existing(id: string): Promise<void> {
    if (!(await users.userById(this.db, id))) throw new AppError('USER_NOT_FOUND');
  }

  async sessions(id: string): Promise<SessionSummary[]> {
    await this.existing(id);
    const { rows } = await this.db.query<{ id: string; created_at: Date; expires_at: Date; ip: string | null; user_agent: string | null }>(
      `select id, created_at, expires_at, ip, user_agent from auth.sessions
        where user_id = $1 and revoked_at is null and expires_at > now() order by created_at desc limit 100`,
      [id],
    );
    return rows.map((r) => ({ id: r.id, createdAt: iso(r.created_at), expiresAt: iso(r.expires_at), ip: r.ip, userAgent: r.user_agent }));
  }

  async identities(id: string): Promise<IdentitySummary[]> {
    await this.existing(id);
    const { rows } = await this.db.query<{ provider: string; email: string | null; last_sign_in_at: Date }>(
      'select provider, email, last_sign_in_at from auth.identities where user_id = $1 order by created_at',
      [id],
    );
    return rows.map((r) => ({ provider: r.provider, email: r.email, lastSignInAt: iso(r.last_sign_in_at) }));
  }

  /** Sets the profile's name and/or marks the email verified (never unverifies); answers the user. */
  async update(id: string, input: { name?: string; emailVerified?: true }): Promise<users.User> {
    await this.existing(id);
    if (input.emailVerified) await users.markEmailVerified(this.db, id);
    if (input.name !== undefined) await users.mergeProfile(this.db, id, { name: input.name });
    return users.toUser((await users.userById(this.db, id))!);
  }
}
