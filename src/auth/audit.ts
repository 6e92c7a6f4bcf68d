import { AppError } from '../errors/index.js';
import type { LogLevel, LogWriter } from '../logs/index.js';
import { AuthService, type AuthContext, type AuthParts, type AuthServiceDeps, type SignedIn } from './service.js';
import type { SignInResult } from './signin.js';
import type { SignInHooks } from './hooks.js';
import type { UserRow } from './users.js';

type Caller = { userId: string; sessionId: string } | null;

/**
 * The auth service that also writes its events to the log store, source `auth`: sign-up,
 * sign-in (ok and failed), refused refreshes (a reused refresh token is a warning: a token
 * was stolen or replayed), sign-out, password resets. Never a password, code or token.
 */
export class AuditedAuthService extends AuthService {
  private readonly hooks: SignInHooks;

  /** `parts` are built with the same audit hooks (`auditHooks(logs)`), so their sign-ins log as these do. */
  constructor(
    deps: AuthServiceDeps,
    parts: AuthParts,
    private readonly logs: LogWriter,
  ) {
    super(deps, parts);
    this.hooks = auditHooks(logs);
  }

  private event(level: LogLevel, message: string, fields: Record<string, unknown>): void {
    this.logs.write('auth', level, message, fields);
  }

  /** Runs `fn`; a refusal (an AppError) is logged as `failed` with its code, then thrown on. */
  private async audited<T>(failed: string, fields: Record<string, unknown>, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      refused(this.logs, failed, err, fields);
      throw err;
    }
  }

  override async signUp(input: { email: string; password: string; name?: string }, ctx: AuthContext) {
    const r = await this.audited('sign-up failed', { email: input.email, ip: ctx.ip }, () => super.signUp(input, ctx));
    this.event('info', 'sign-up', {
      userId: r.user.id,
      email: r.user.email,
      ip: ctx.ip,
      verified: !r.requireEmailVerification,
    });
    return r;
  }

  override async signIn(input: { email: string; password: string }, ctx: AuthContext): Promise<SignInResult> {
    const r = await this.audited('sign-in failed', { email: input.email, method: 'password', ip: ctx.ip }, () =>
      super.signIn(input, ctx),
    );
    this.hooks.onSignIn(r, 'password', ctx);
    return r;
  }

  override async signInWithCode(input: { email: string; code: string }, ctx: AuthContext): Promise<SignInResult> {
    const r = await this.audited('sign-in failed', { email: input.email, method: 'code', ip: ctx.ip }, () =>
      super.signInWithCode(input, ctx),
    );
    this.hooks.onSignIn(r, 'code', ctx);
    return r;
  }

  /** A provider sign-in (src/auth/oauth/): refused ones log here, the others where they happen. */
  override async startSession(row: UserRow, ctx: AuthContext): Promise<SignedIn> {
    return this.audited('sign-in failed', { userId: row.id, method: 'oauth', ip: ctx.ip }, () =>
      super.startSession(row, ctx),
    );
  }

  override async refresh(refreshToken: string): Promise<SignedIn> {
    try {
      return await super.refresh(refreshToken);
    } catch (err) {
      if (err instanceof AppError && err.details === 'reused')
        this.event('warn', 'refresh token reused: session ended', { reason: err.code });
      else if (err instanceof AppError)
        this.event('info', 'refresh refused', { reason: err.code, detail: err.details });
      throw err;
    }
  }

  override async signOutSession(sessionId: string): Promise<void> {
    await super.signOutSession(sessionId);
    this.event('info', 'sign-out', { sessionId });
  }

  override async signOutExpiredToken(token: string): Promise<void> {
    await super.signOutExpiredToken(token);
    this.event('info', 'sign-out', { with: 'expired access token' });
  }

  override async signOutRefreshToken(refreshToken: string): Promise<void> {
    await super.signOutRefreshToken(refreshToken);
    this.event('info', 'sign-out', { with: 'refresh token' });
  }

  override async sendPasswordReset(rawEmail: string, ctx: AuthContext): Promise<void> {
    await super.sendPasswordReset(rawEmail, ctx);
    this.event('info', 'password reset requested', { email: rawEmail, ip: ctx.ip });
  }

  override async resetPassword(
    input: { email: string; code: string; newPassword: string },
    caller: Caller,
  ): Promise<void> {
    await this.audited('password reset failed', { email: input.email }, () => super.resetPassword(input, caller));
    this.event('info', 'password reset', { email: input.email, by: caller ? 'signed-in user' : 'emailed code' });
  }

  override async resetPasswordWithToken(input: { token: string; newPassword: string }, caller: Caller): Promise<void> {
    await this.audited('password reset failed', { with: 'reset token' }, () =>
      super.resetPasswordWithToken(input, caller),
    );
    this.event('info', 'password reset', { with: 'reset token' });
  }
}

/** A refusal (an AppError) logged as `failed` with its code; other errors are not refusals. */
function refused(logs: LogWriter, failed: string, err: unknown, fields: Record<string, unknown>): void {
  if (err instanceof AppError)
    logs.write('auth', 'warn', failed, {
      ...fields,
      reason: err.code,
      ...(err.details ? { detail: err.details } : {}),
    });
}

/** The audit lines of a sign-in: a session, a challenge for the second factor, or a refusal. */
export function auditHooks(logs: LogWriter): SignInHooks {
  return {
    onSignIn: (r, method, ctx) => {
      if ('mfaRequired' in r) logs.write('auth', 'info', 'sign-in: second factor required', { method, ip: ctx.ip });
      else logs.write('auth', 'info', 'sign-in', { userId: r.user.id, method, ip: ctx.ip });
    },
    onFailed: (err, fields) => refused(logs, 'sign-in failed', err, fields),
  };
}
