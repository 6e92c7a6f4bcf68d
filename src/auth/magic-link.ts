import { randomBytes } from 'node:crypto';
import type { Db } from '../db/types.js';
import { AppError } from '../errors/index.js';
import { isRedirectAllowed } from './oauth/redirects.js';
import { CODE_TTL_SECONDS, type EmailCodes } from './codes.js';
import { normalizeEmail } from './email.js';
import type { AuthGuard } from './guard.js';
import type { Mailer } from './mailer.js';
import type { SessionIssuer, SignInResult } from './signin.js';
import type { AuthContext } from './context.js';
import { heard, type SignInHooks } from './hooks.js';
import * as users from './users.js';
import { KeyLock } from '../lib/key-lock.js';

/** `ml_<user id>_<192 random bits>`: the user id finds the code row, the rest is the secret. */
const MAGIC_TOKEN = /^ml_([0-9a-f-]{36})_[A-Za-z0-9_-]{32}$/;

export interface MagicLinkDeps {
  db: Db;
  codes: EmailCodes;
  mailer: Mailer;
  guard: AuthGuard;
  issuer: SessionIssuer;
  redirectUrls: readonly string[];
  hooks?: SignInHooks;
}

/**
 * Sign-in by a link mailed to a known address. The link leads to the app's own page (one of
 * AUTH_REDIRECT_URLS) with `?magic_token=…`; the app trades the token for a session with
 * POST /api/auth/magic-link/verify. Single use, 15 minutes, one live link per user, kept
 * only as an HMAC (the one-time codes table, purpose `magic_link`).
 */
export class MagicLinks {
  /** A user's links are issued one at a time, in the order asked (the last one asked is live). */
  private readonly issuing = new KeyLock();

  constructor(private readonly deps: MagicLinkDeps) {}

  /**
   * Mails a link when the address has an account; answers the same either way, after the same
   * work (the guard and the lookup): the link is issued and mailed after the answer, so its
   * timing does not tell which addresses have accounts (test/auth/timing-magic-link.test.ts).
   */
  async send(input: { email: string; redirectTo: string }, ctx: AuthContext): Promise<void> {
    const target = isRedirectAllowed(this.deps.redirectUrls, input.redirectTo);
    const email = normalizeEmail(input.email);
    await this.deps.guard.mailSent(email);
    const row = await users.userByEmail(this.deps.db, email);
    if (!row) return;
    // After this turn of the event loop, so the answer goes out before any of the link's work
    // (its token, the insert, the mail) starts: a known address answers as fast as an unknown one.
    setImmediate(() =>
      this.issuing
        .run(row.id, () => this.issue(row, target, ctx))
        .catch((err) => ctx.log.error({ err }, 'magic link could not be issued')),
    );
  }

  /** Stores a new link (the user's previous one stops working) and mails it. */
  private async issue(row: users.UserRow, target: string, ctx: AuthContext): Promise<void> {
    const token = await this.deps.codes.issue(
      this.deps.db,
      row.id,
      'magic_link',
      `ml_${row.id}_${randomBytes(24).toString('base64url')}`,
    );
    const link = new URL(target);
    link.searchParams.set('magic_token', token);
    const minutes = CODE_TTL_SECONDS / 60;
    const mail = {
      to: row.email,
      subject: 'Your sign-in link',
      text: `Open this link to sign in:\n\n${link.toString()}\n\nIt works once, for ${minutes} minutes. If you did not ask to sign in, ignore this email.\n`,
    };
    this.deps.mailer
      .send(mail, ctx.log)
      .catch((err) => ctx.log.error({ err, to: row.email }, 'email could not be sent'));
  }

  /** Trades a magic-link token for a session (or an MFA challenge); the link proves the address. */
  verify(token: string, ctx: AuthContext): Promise<SignInResult> {
    return heard(this.deps.hooks, 'magiclink', ctx, () => this.trade(token, ctx));
  }

  private async trade(token: string, ctx: AuthContext): Promise<SignInResult> {
    const userId = MAGIC_TOKEN.exec(token)?.[1];
    const row = userId ? await users.userById(this.deps.db, userId) : null;
    if (!row || !(await this.deps.codes.consume(this.deps.db, row.id, 'magic_link', token))) {
      throw new AppError('INVALID_CODE', {
        message: 'The sign-in link is wrong, already used or expired.',
        nextActions: 'Ask for a new link with POST /api/auth/magic-link.',
      });
    }
    const verified = row.email_verified ? row : ((await users.markEmailVerified(this.deps.db, row.id)) ?? row);
    return this.deps.issuer.afterFirstFactor(verified, ctx, 'magiclink');
  }
}
