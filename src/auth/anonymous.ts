import type { Db } from '../db/types.js';
import { AppError } from '../errors/index.js';
import type { AuthGuard } from './guard.js';
import { normalizeEmail, parseEmail } from './email.js';
import type { ProviderProfile } from './oauth/providers.js';
import { hashPassword } from './passwords.js';
import { NO_PASSWORD } from './providers.js';
import { amrEntry, type SessionIssuer, type SignedIn } from './signin.js';
import type { AuthContext } from './context.js';
import { heard, type SignInHooks } from './hooks.js';
import * as sessions from './sessions.js';
import { USER_COLUMNS, userById, type UserRow } from './users.js';

export interface AnonymousDeps {
  db: Db;
  /** Where the cleanup deletes users (AuthServiceDeps.ownerDb). */
  ownerDb?: Db;
  issuer: SessionIssuer;
  guard: AuthGuard;
  anonymousSignIn: boolean;
  requireEmailVerification: boolean;
  sendVerification: (row: UserRow, ctx: AuthContext) => Promise<void>;
  hooks?: SignInHooks;
}

/**
 * Anonymous users: no email, no password, role `authenticated` with `is_anonymous: true` in
 * the user and the token, so RLS can tell them apart. Converted in place (same id, same
 * rows) by adding an email and a password; left-overs removed by an admin cleanup.
 */
export class AnonymousUsers {
  constructor(private readonly deps: AnonymousDeps) {}

  /** A new anonymous user and its session (aal1, amr `anonymous`); limited per IP. */
  signIn(ctx: AuthContext): Promise<SignedIn> {
    return heard(this.deps.hooks, 'anonymous', ctx, () => this.create(ctx));
  }

  private async create(ctx: AuthContext): Promise<SignedIn> {
    if (!this.deps.anonymousSignIn) throw new AppError('ANONYMOUS_SIGNIN_DISABLED');
    await this.deps.guard.anonymousSignIn(ctx.ip);
    const { rows } = await this.deps.db.query<UserRow>(
      `insert into auth.users (email, password_hash, is_anonymous) values (null, $1, true) returning ${USER_COLUMNS}`,
      [NO_PASSWORD],
    );
    return this.deps.issuer.open(rows[0]!, ctx, 'aal1', [amrEntry('anonymous')]);
  }

  /**
   * Makes the caller's anonymous account permanent with an email and a password: same id,
   * same data. Answers a new session (the anonymous one ends). With
   * REQUIRE_EMAIL_VERIFICATION the address gets a code, as at sign-up.
   */
  async convert(
    caller: { userId: string; sessionId: string },
    input: { email: string; password: string; name?: string },
    ctx: AuthContext,
  ): Promise<SignedIn & { requireEmailVerification: boolean }> {
    const email = parseEmail(input.email);
    const hash = await hashPassword(input.password);
    const name = input.name?.trim();
    const { rows } = await this.deps.db.query<UserRow>(
      `update auth.users set email = $2, password_hash = $3, is_anonymous = false, updated_at = now(),
         profile = case when $4::text is null then profile else profile || jsonb_build_object('name', $4::text) end
       where id = $1 and is_anonymous returning ${USER_COLUMNS}`,
      [caller.userId, email, hash, name || null],
    );
    const row = rows[0];
    if (!row) throw new AppError('NOT_ANONYMOUS');
    if (this.deps.requireEmailVerification) await this.deps.sendVerification(row, ctx);
    const signedIn = await this.deps.issuer.open(row, ctx, 'aal1', [amrEntry('password')]);
    await sessions.revokeSession(this.deps.db, caller.sessionId);
    return { ...signedIn, requireEmailVerification: this.deps.requireEmailVerification };
  }

  /**
   * Converts the caller's anonymous account with a provider's identity (see
   * OAuthService.linkAnonymous): the provider's email becomes the account's, as verified as
   * the provider says. An identity linked elsewhere, or an email that has an account, is a 409:
   * the anonymous data cannot be merged into another account.
   */
  async adoptIdentity(
    caller: { userId: string; sessionId: string },
    provider: string,
    p: ProviderProfile,
    ctx: AuthContext,
  ): Promise<SignedIn> {
    const email = p.email === null ? null : normalizeEmail(p.email);
    if (email === null || !email.includes('@')) throw new AppError('OAUTH_EMAIL_MISSING');
    const row = await this.deps.db.transaction(async (tx) => {
      const taken = await tx.query('select 1 from auth.identities where provider = $1 and subject = $2', [
        provider,
        p.subject,
      ]);
      if (taken.rows.length)
        throw new AppError('ALREADY_EXISTS', {
          message: `This ${provider} account is already linked to another user; sign in with it instead.`,
        });
      const profile: Record<string, string> = {};
      if (p.name) profile.name = p.name.slice(0, 256);
      if (p.avatarUrl && /^https?:\/\//.test(p.avatarUrl)) profile.avatar_url = p.avatarUrl.slice(0, 2048);
      const { rows } = await tx.query<UserRow>(
        `update auth.users set email = $2, email_verified = $3, is_anonymous = false, profile = $4::jsonb || profile, updated_at = now()
         where id = $1 and is_anonymous returning id`,
        [caller.userId, email, p.emailVerified, JSON.stringify(profile)],
      );
      if (!rows[0]) throw new AppError('NOT_ANONYMOUS');
      await tx.query(
        'insert into auth.identities (user_id, provider, subject, email, email_verified) values ($1, $2, $3, $4, $5)',
        [caller.userId, provider, p.subject, email, p.emailVerified],
      );
      return (await userById(tx, caller.userId))!;
    });
    const signedIn = await this.deps.issuer.open(row, ctx, 'aal1', [amrEntry('oauth')]);
    await sessions.revokeSession(this.deps.db, caller.sessionId);
    return signedIn;
  }

  /**
   * Admin: deletes anonymous users created more than `olderThanDays` days ago (their rows in
   * other tables go as their foreign keys say). How many went.
   */
  async cleanup(olderThanDays: number): Promise<number> {
    // On the owner's pool: the delete cascades into the app's tables (see AuthServiceDeps.ownerDb).
    const { rowCount } = await (this.deps.ownerDb ?? this.deps.db).query(
      `delete from auth.users where is_anonymous and created_at < now() - make_interval(days => $1)`,
      [olderThanDays],
    );
    return rowCount;
  }
}
