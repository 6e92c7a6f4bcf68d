import type { Db } from '../db/types.js';
import { AppError } from '../errors/index.js';
import type { TokenSigner } from './tokens.js';
import type { Mail, MailLog, Mailer } from './mailer.js';
import type { AuthGuard } from './guard.js';
import { CODE_TTL_SECONDS, type CodePurpose, type EmailCodes } from './codes.js';
import { DummyHash, hashPassword, verifyPassword } from './passwords.js';
import { normalizeEmail, parseEmail } from './email.js';
import * as users from './users.js';
import * as sessions from './sessions.js';
import type { User, UserRow } from './users.js';

/** Who is asking, for guards, session records and the log. */
export interface AuthContext {
  ip: string;
  userAgent: string | null;
  log: MailLog;
}

export interface SignedIn {
  user: User;
  accessToken: string;
  refreshToken: string;
}

export interface AuthServiceDeps {
  db: Db;
  tokens: TokenSigner;
  mailer: Mailer;
  guard: AuthGuard;
  codes: EmailCodes;
  refreshTtlSeconds: number;
  requireEmailVerification: boolean;
}

const CODE_MINUTES = CODE_TTL_SECONDS / 60;

/** Sign-up, sign-in, sessions, email codes and user administration. Framework-free. */
export class AuthService {
  private readonly dummy = new DummyHash();

  constructor(private readonly deps: AuthServiceDeps) {
    // Build the dummy hash now, so the first unknown-email sign-in is not slower.
    void this.dummy.get();
  }

  get requireEmailVerification(): boolean {
    return this.deps.requireEmailVerification;
  }

  async signUp(
    input: { email: string; password: string; name?: string },
    ctx: AuthContext,
  ): Promise<{ user: User; accessToken: string | null; refreshToken: string | null; requireEmailVerification: boolean }> {
    const email = parseEmail(input.email);
    const name = input.name?.trim() || null;
    const passwordHash = await hashPassword(input.password);
    let row: UserRow;
    try {
      row = await users.insertUser(this.deps.db, { email, passwordHash, name });
    } catch (err) {
      if (err instanceof AppError && err.code === 'ALREADY_EXISTS') {
        throw new AppError('ALREADY_EXISTS', {
          message: 'An account with this email already exists.',
          nextActions: 'Sign in with POST /api/auth/signin, or reset the password with POST /api/auth/email/send-reset-password.',
          cause: err,
        });
      }
      throw err;
    }
    if (this.deps.requireEmailVerification) {
      // Not counted against the per-address mail limit: an address signs up once, and a
      // 429 here would leave an account behind with no code.
      await this.sendCode(row, 'verify_email', ctx);
      return { user: users.toUser(row), accessToken: null, refreshToken: null, requireEmailVerification: true };
    }
    return { ...(await this.startSession(row, ctx)), requireEmailVerification: false };
  }

  /**
   * Wrong password and unknown email answer the same error after the same work: an unknown
   * email is checked against a dummy hash of the same cost.
   */
  async signIn(input: { email: string; password: string }, ctx: AuthContext): Promise<SignedIn> {
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
    return this.startSession(row, ctx);
  }

  /** The user behind a live session (the identity layer has checked the session). */
  /**
   * The signed-in user, read together with the check that the session is live (the route
   * leaves that check to this query): an ended session or a deleted user is INVALID_TOKEN.
   */
  async currentUser(caller: { userId: string; sessionId: string }): Promise<User> {
    const row = await users.userOfLiveSession(this.deps.db, caller.userId, caller.sessionId);
    if (!row) throw new AppError('INVALID_TOKEN', { message: 'The session of this access token has ended, or its user no longer exists.' });
    return users.toUser(row);
  }

  /** Spends a refresh token for a new pair. Reusing a spent token ends the session. */
  async refresh(refreshToken: string): Promise<SignedIn> {
    const r = await sessions.rotateRefreshToken(this.deps.db, refreshToken, this.deps.refreshTtlSeconds);
    if (!r.ok) {
      throw new AppError('INVALID_REFRESH_TOKEN', {
        message:
          r.reason === 'reused'
            ? 'This refresh token was already used; its session has been ended for safety.'
            : r.reason === 'ended'
              ? 'The session of this refresh token has ended.'
              : 'The refresh token is invalid.',
      });
    }
    const row = await users.userById(this.deps.db, r.userId);
    if (!row) throw new AppError('INVALID_REFRESH_TOKEN', { message: 'The user of this refresh token no longer exists.' });
    const accessToken = await this.accessToken(row, r.sessionId);
    return { user: users.toUser(row), accessToken, refreshToken: r.refreshToken };
  }

  /** Ends a session by id (from the caller's access token). */
  async signOutSession(sessionId: string): Promise<void> {
    await sessions.revokeSession(this.deps.db, sessionId);
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
    if (row && !row.email_verified) await this.sendCode(row, 'verify_email', ctx);
  }

  /** Checks a verification code; marks the email verified and signs the user in. */
  async verifyEmail(input: { email: string; code: string }, ctx: AuthContext): Promise<SignedIn> {
    const row = await users.userByEmail(this.deps.db, normalizeEmail(input.email));
    if (!row || !(await this.deps.codes.consume(this.deps.db, row.id, 'verify_email', input.code))) {
      throw new AppError('INVALID_CODE');
    }
    const verified = (await users.markEmailVerified(this.deps.db, row.id)) ?? row;
    return this.startSession(verified, ctx);
  }

  async sendPasswordReset(rawEmail: string, ctx: AuthContext): Promise<void> {
    const email = normalizeEmail(rawEmail);
    await this.deps.guard.mailSent(email);
    const row = await users.userByEmail(this.deps.db, email);
    if (row) await this.sendCode(row, 'reset_password', ctx);
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
    const hash = await hashPassword(input.newPassword);
    await this.deps.db.transaction(async (tx) => {
      await users.setPassword(tx, row.id, hash);
      await sessions.revokeUserSessions(tx, row.id, caller?.userId === row.id ? caller.sessionId : null);
      await this.deps.codes.revokeAll(tx, row.id);
    });
    await this.deps.guard.signInSucceeded(email);
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
    if (!(await users.deleteUser(this.deps.db, id))) throw new AppError('USER_NOT_FOUND');
  }

  /** Ends every session of a user (their tokens stop working at once); how many were live. */
  async revokeSessions(id: string): Promise<number> {
    if (!(await users.userById(this.deps.db, id))) throw new AppError('USER_NOT_FOUND');
    return sessions.revokeUserSessions(this.deps.db, id, null);
  }

  private async startSession(row: UserRow, ctx: AuthContext): Promise<SignedIn> {
    await sessions.pruneSessions(this.deps.db, row.id);
    const s = await sessions.openSession(this.deps.db, row.id, this.deps.refreshTtlSeconds, {
      ip: ctx.ip,
      userAgent: ctx.userAgent,
    });
    const accessToken = await this.accessToken(row, s.sessionId);
    return { user: users.toUser(row), accessToken, refreshToken: s.refreshToken };
  }

  private accessToken(row: UserRow, sessionId: string): Promise<string> {
    return this.deps.tokens.sign({ sub: row.id, email: row.email, role: 'authenticated', sid: sessionId });
  }

  /**
   * Issues a code and mails it. The mail is sent in the background (a failure is logged), so
   * the answer takes the same time whether or not a mail went out. Callers count the mail
   * against the per-address limit first, before anything changes.
   */
  private async sendCode(row: UserRow, purpose: CodePurpose, ctx: AuthContext): Promise<void> {
    const code = await this.deps.codes.issue(this.deps.db, row.id, purpose);
    const mail: Mail =
      purpose === 'verify_email'
        ? {
            to: row.email,
            subject: `Your verification code: ${code}`,
            text: `Your verification code is ${code}.\n\nIt is valid for ${CODE_MINUTES} minutes. If you did not sign up, ignore this email.\n`,
          }
        : {
            to: row.email,
            subject: `Your password reset code: ${code}`,
            text: `Your password reset code is ${code}.\n\nIt is valid for ${CODE_MINUTES} minutes. If you did not ask to reset your password, ignore this email: your password stays as it is.\n`,
          };
    this.deps.mailer.send(mail, ctx.log).catch((err) => ctx.log.error({ err, to: row.email }, 'email could not be sent'));
  }
}
