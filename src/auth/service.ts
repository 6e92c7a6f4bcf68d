import { randomBytes } from 'node:crypto';
import { AppError } from '../errors/index.js';
import { CODE_TTL_SECONDS } from './codes.js';
import { DummyHash, hashPassword, verifyPassword } from './passwords.js';
import { normalizeEmail, parseEmail } from './email.js';
import * as users from './users.js';
import * as sessions from './sessions.js';
import type { User, UserRow } from './users.js';
import { amrEntry, type SessionIssuer, type SignedIn, type SignInResult } from './signin.js';
import type { MfaService } from './mfa.js';
import type { AnonymousUsers } from './anonymous.js';
import type { MagicLinks } from './magic-link.js';
import type { CodeMail } from './code-mail.js';
import type { AuthContext, AuthServiceDeps } from './context.js';

export type { SignedIn, SignInResult } from './signin.js';
export type { AuthContext, AuthServiceDeps } from './context.js';

const RESET_TOKEN = /^rpt_([0-9a-f-]{36})_[A-Za-z0-9_-]{32}$/;

/** The auth services built beside the main one (src/auth/create.ts), each on the shared deps. */
export interface AuthParts {
  issuer: SessionIssuer;
  codeMail: CodeMail;
  /** TOTP factors, challenges and recovery codes. */
  mfa: MfaService;
  /** Anonymous sign-in, conversion and cleanup. */
  anonymous: AnonymousUsers;
  magicLinks: MagicLinks;
}

/** Sign-up, sign-in, sessions, email codes and user administration. Framework-free. */
export class AuthService {
  private readonly dummy = new DummyHash();
  readonly issuer: SessionIssuer;
  readonly mfa: MfaService;
  readonly anonymous: AnonymousUsers;
  readonly magicLinks: MagicLinks;
  private readonly codeMail: CodeMail;

  constructor(
    private readonly deps: AuthServiceDeps,
    parts: AuthParts,
  ) {
    // Build the dummy hash now, so the first unknown-email sign-in is not slower.
    void this.dummy.get();
    ({ issuer: this.issuer, mfa: this.mfa, anonymous: this.anonymous, magicLinks: this.magicLinks } = parts);
    this.codeMail = parts.codeMail;
  }

  get requireEmailVerification(): boolean {
    return this.deps.requireEmailVerification;
  }

  async signUp(
    input: { email: string; password: string; name?: string },
    ctx: AuthContext,
  ): Promise<{
    user: User;
    accessToken: string | null;
    refreshToken: string | null;
    requireEmailVerification: boolean;
  }> {
    const email = parseEmail(input.email);
    const name = input.name?.trim() || null;
    const passwordHash = await hashPassword(input.password);
    const row = await this.insertNewUser({ email, passwordHash, name });
    if (this.deps.requireEmailVerification) {
      // Not counted against the per-address mail limit: an address signs up once, and a
      // 429 here would leave an account behind with no code.
      await this.codeMail.send(row, 'verify_email', ctx);
      return { user: users.toUser(row), accessToken: null, refreshToken: null, requireEmailVerification: true };
    }
    return { ...(await this.issuer.open(row, ctx, 'aal1', [amrEntry('password')])), requireEmailVerification: false };
  }

  /**
   * Wrong password and unknown email answer the same error after the same work: an unknown
   * email is checked against a dummy hash of the same cost. A user with a verified MFA
   * factor gets a challenge instead of a session.
   */
  async signIn(input: { email: string; password: string }, ctx: AuthContext): Promise<SignInResult> {
    const email = normalizeEmail(input.email);
    await this.deps.guard.checkSignIn(email, ctx.ip);
    const row = await users.userByEmail(this.deps.db, email);
    const ok = await verifyPassword(row?.password_hash ?? (await this.dummy.get()), input.password);
    if (!row || !ok) {
      await this.deps.guard.signInFailed(email, ctx.ip);
      throw new AppError('INVALID_CREDENTIALS');
    }
    if (this.deps.requireEmailVerification && !row.email_verified) throw new AppError('EMAIL_NOT_VERIFIED');
    await this.deps.guard.signInSucceeded(email);
    return this.issuer.afterFirstFactor(row, ctx, 'password');
  }

  /**
   * The signed-in user, read together with the check that the session is live (the route
   * leaves that check to this query): an ended session or a deleted user is AUTH_UNAUTHORIZED.
   */
  async currentUser(caller: { userId: string; sessionId: string }): Promise<User> {
    const row = await users.userOfLiveSession(this.deps.db, caller.userId, caller.sessionId);
    if (!row)
      throw new AppError('AUTH_UNAUTHORIZED', {
        message: 'The session of this access token has ended, or its user no longer exists.',
      });
    return users.toUser(row);
  }

  /** Spends a refresh token for a new pair at the session's level. Reusing a spent token ends the session. */
  refresh(refreshToken: string): Promise<SignedIn> {
    return this.issuer.refresh(refreshToken);
  }

  /** Ends a session by id (from the caller's access token). */
  async signOutSession(sessionId: string): Promise<void> {
    await sessions.revokeSession(this.deps.db, sessionId);
  }

  /**
   * Ends the session of an access token that has expired (the InsForge SDK signs out with the
   * last token it holds). The token must be authentic; an ended session stays ended.
   */
  async signOutExpiredToken(token: string): Promise<void> {
    const claims = await this.deps.tokens.verifyIgnoringExpiry(token);
    if (claims.role !== 'authenticated') throw new AppError('INVALID_TOKEN');
    await sessions.revokeSessionOf(this.deps.db, claims.sid, claims.sub);
  }

  /** Ends the session a refresh token belongs to (sign-out after the access token expired). */
  async signOutRefreshToken(refreshToken: string): Promise<void> {
    const s = await sessions.sessionOfRefreshToken(this.deps.db, refreshToken);
    if (!s) throw new AppError('INVALID_REFRESH_TOKEN');
    await sessions.revokeSession(this.deps.db, s.sessionId);
  }

  /** Mails a new verification code when the address belongs to an unverified user. */
  async sendVerification(rawEmail: string, ctx: AuthContext): Promise<void> {
    const email = normalizeEmail(rawEmail);
    await this.deps.guard.mailSent(email);
    const row = await users.userByEmail(this.deps.db, email);
    // Answer the same whether or not the address is known, so it cannot be probed.
    if (row && !row.email_verified) await this.codeMail.send(row, 'verify_email', ctx);
  }

  /** Checks a verification code; marks the email verified and signs the user in. */
  async verifyEmail(input: { email: string; code: string }, ctx: AuthContext): Promise<SignInResult> {
    const row = await users.userByEmail(this.deps.db, normalizeEmail(input.email));
    if (!row || !(await this.deps.codes.consume(this.deps.db, row.id, 'verify_email', input.code))) {
      throw new AppError('INVALID_CODE');
    }
    const verified = (await users.markEmailVerified(this.deps.db, row.id)) ?? row;
    return this.issuer.afterFirstFactor(verified, ctx, 'otp');
  }

  async sendPasswordReset(rawEmail: string, ctx: AuthContext): Promise<void> {
    const email = normalizeEmail(rawEmail);
    await this.deps.guard.mailSent(email);
    const row = await users.userByEmail(this.deps.db, email);
    if (row) await this.codeMail.send(row, 'reset_password', ctx);
  }

  /**
   * Sets a new password with an emailed code. The address is then proven, so it counts as
   * verified. Every session of the user ends except the caller's own, when the caller is
   * that user signed in, and every other code of the user is void (a verification code
   * mailed earlier would sign in without the new password).
   */
  async resetPassword(
    input: { email: string; code: string; newPassword: string },
    caller: { userId: string; sessionId: string } | null,
  ): Promise<void> {
    const email = normalizeEmail(input.email);
    const row = await users.userByEmail(this.deps.db, email);
    if (!row || !(await this.deps.codes.consume(this.deps.db, row.id, 'reset_password', input.code))) {
      throw new AppError('INVALID_CODE');
    }
    await this.applyNewPassword(row, input.newPassword, caller);
  }

  /**
   * InsForge's two-step reset, step 1: trades an emailed reset code for a one-time reset
   * token (`rpt_<user id>_<random>`, kept only as an HMAC, valid as long as a code).
   */
  async exchangeResetCode(input: { email: string; code: string }): Promise<{ token: string; expiresAt: string }> {
    const row = await users.userByEmail(this.deps.db, normalizeEmail(input.email));
    if (!row || !(await this.deps.codes.consume(this.deps.db, row.id, 'reset_password', input.code))) {
      throw new AppError('INVALID_CODE');
    }
    const token = await this.deps.codes.issue(
      this.deps.db,
      row.id,
      'reset_token',
      `rpt_${row.id}_${randomBytes(24).toString('base64url')}`,
    );
    return { token, expiresAt: new Date(Date.now() + CODE_TTL_SECONDS * 1000).toISOString() };
  }

  /** Step 2: sets the new password with the reset token, with the effects of resetPassword. */
  async resetPasswordWithToken(
    input: { token: string; newPassword: string },
    caller: { userId: string; sessionId: string } | null,
  ): Promise<void> {
    const userId = RESET_TOKEN.exec(input.token)?.[1];
    const row = userId ? await users.userById(this.deps.db, userId) : null;
    if (!row || !(await this.deps.codes.consume(this.deps.db, row.id, 'reset_token', input.token))) {
      throw new AppError('INVALID_CODE', { message: 'The reset token is wrong, used or expired.' });
    }
    await this.applyNewPassword(row, input.newPassword, caller);
  }

  /** Mails a 6-digit sign-in code to a known address (answers the same for unknown ones). */
  async sendSignInCode(rawEmail: string, ctx: AuthContext): Promise<void> {
    const email = normalizeEmail(rawEmail);
    await this.deps.guard.mailSent(email);
    const row = await users.userByEmail(this.deps.db, email);
    if (row) await this.codeMail.send(row, 'sign_in', ctx);
  }

  /** Signs in with an emailed sign-in code; the code proves the address, so it counts as verified. */
  async signInWithCode(input: { email: string; code: string }, ctx: AuthContext): Promise<SignInResult> {
    const row = await users.userByEmail(this.deps.db, normalizeEmail(input.email));
    if (!row || !(await this.deps.codes.consume(this.deps.db, row.id, 'sign_in', input.code))) {
      throw new AppError('INVALID_CODE');
    }
    const verified = row.email_verified ? row : ((await users.markEmailVerified(this.deps.db, row.id)) ?? row);
    return this.issuer.afterFirstFactor(verified, ctx, 'otp');
  }

  /**
   * An admin creates an account with a password: no code is mailed and no session opened;
   * the address counts as verified when the admin says so.
   */
  async createUser(input: { email: string; password: string; name?: string; emailVerified?: boolean }): Promise<User> {
    const row = await this.insertNewUser({
      email: parseEmail(input.email),
      passwordHash: await hashPassword(input.password),
      name: input.name?.trim() || null,
    });
    if (!input.emailVerified) return users.toUser(row);
    return users.toUser((await users.markEmailVerified(this.deps.db, row.id)) ?? row);
  }

  /** A user's id and profile (public facts: no email). */
  async profileOf(userId: string): Promise<{ id: string; profile: Record<string, unknown> }> {
    const row = await users.userById(this.deps.db, userId);
    if (!row) throw new AppError('USER_NOT_FOUND');
    return { id: row.id, profile: users.toUser(row).profile };
  }

  /** Merges keys into the caller's profile; a null value removes a key. */
  async updateProfile(
    userId: string,
    patch: Record<string, unknown>,
  ): Promise<{ id: string; profile: Record<string, unknown> }> {
    const row = await users.mergeProfile(this.deps.db, userId, patch);
    if (!row) throw new AppError('AUTH_UNAUTHORIZED', { message: 'The user of this access token no longer exists.' });
    return { id: row.id, profile: users.toUser(row).profile };
  }

  async listUsers(page: { limit: number; offset: number; search?: string }) {
    const { rows, total } = await users.listUsers(this.deps.db, {
      limit: page.limit,
      offset: page.offset,
      search: page.search ? normalizeEmail(page.search) : null,
    });
    return { data: rows.map(users.toUser), pagination: { offset: page.offset, limit: page.limit, total } };
  }

  async getUser(id: string): Promise<User> {
    const row = await users.userById(this.deps.db, id);
    if (!row) throw new AppError('USER_NOT_FOUND');
    return users.toUser(row);
  }

  /** Deletes a user; its sessions and refresh tokens go with it (cascade), ending them at once. */
  async deleteUser(id: string): Promise<void> {
    if (!(await users.deleteUser(this.deps.ownerDb ?? this.deps.db, id))) throw new AppError('USER_NOT_FOUND');
  }

  /** Ends every session of a user (their tokens stop working at once); how many were live. */
  async revokeSessions(id: string): Promise<number> {
    if (!(await users.userById(this.deps.db, id))) throw new AppError('USER_NOT_FOUND');
    return sessions.revokeUserSessions(this.deps.db, id, null);
  }

  private async insertNewUser(u: { email: string; passwordHash: string; name: string | null }): Promise<UserRow> {
    try {
      return await users.insertUser(this.deps.db, u);
    } catch (err) {
      if (err instanceof AppError && err.code === 'ALREADY_EXISTS') {
        throw new AppError('ALREADY_EXISTS', {
          message: 'An account with this email already exists.',
          nextActions:
            'Sign in with POST /api/auth/signin, or reset the password with POST /api/auth/email/send-reset-password.',
          cause: err,
        });
      }
      throw err;
    }
  }

  /** Sets a new password: other sessions end, every other code is void. */
  private async applyNewPassword(
    row: UserRow,
    newPassword: string,
    caller: { userId: string; sessionId: string } | null,
  ): Promise<void> {
    const hash = await hashPassword(newPassword);
    await this.deps.db.transaction(async (tx) => {
      await users.setPassword(tx, row.id, hash);
      await sessions.revokeUserSessions(tx, row.id, caller?.userId === row.id ? caller.sessionId : null);
      await this.deps.codes.revokeAll(tx, row.id);
    });
    await this.deps.guard.signInSucceeded(row.email);
  }

  /**
   * Opens an aal1 session for a provider sign-in (src/auth/oauth/). MFA does not stop it: the
   * user steps up to aal2 with POST /api/auth/mfa/factors/{id}/verify.
   */
  startSession(row: UserRow, ctx: AuthContext): Promise<SignedIn> {
    return this.issuer.open(row, ctx, 'aal1', [amrEntry('oauth')]);
  }
}
