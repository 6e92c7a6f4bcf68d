// What the auth services share: who is asking, what they are built with, and the text of
// the mailed codes.
import type { Db } from '../db/types.js';
import { CODE_TTL_SECONDS, type CodePurpose, type EmailCodes } from './codes.js';
import type { AuthGuard } from './guard.js';
import type { MailLog, Mailer } from './mailer.js';
import type { TokenSigner } from './tokens.js';

export const CODE_MINUTES = CODE_TTL_SECONDS / 60;

/** Who is asking, for guards, session records and the log. */
export interface AuthContext {
  ip: string;
  userAgent: string | null;
  log: MailLog;
}

export interface AuthServiceDeps {
  db: Db;
  /**
   * The owner role's pool, where users are deleted: the delete cascades into the app's tables
   * (foreign keys to auth.users), whose triggers must never run in a superuser's session
   * (docs/security.md). Defaults to `db`.
   */
  ownerDb?: Db;
  tokens: TokenSigner;
  mailer: Mailer;
  guard: AuthGuard;
  codes: EmailCodes;
  refreshTtlSeconds: number;
  requireEmailVerification: boolean;
  /** Whether anonymous sign-in is open (AUTH_ANONYMOUS_SIGNIN). */
  anonymousSignIn: boolean;
  /** The server secret: keys the TOTP secrets' encryption and the recovery codes' HMAC. */
  secret: string;
  /** AUTH_REDIRECT_URLS: where a magic link may lead. */
  redirectUrls: readonly string[];
  /** The mail of a code purpose from an admin's template (the email area; wins over the built-in text), or null. */
  templates?: (
    purpose: CodePurpose,
    vars: Record<string, string>,
  ) => Promise<{ subject: string; text: string; html?: string } | null>;
}

/** Subject and text of each mailed code (the subject carries the code, for mail previews). */
export const CODE_MAILS: Record<CodePurpose, (code: string) => { subject: string; text: string }> = {
  verify_email: (code) => ({
    subject: `Your verification code: ${code}`,
    text: `Your verification code is ${code}.\n\nIt is valid for ${CODE_MINUTES} minutes. If you did not sign up, ignore this email.\n`,
  }),
  reset_password: (code) => ({
    subject: `Your password reset code: ${code}`,
    text: `Your password reset code is ${code}.\n\nIt is valid for ${CODE_MINUTES} minutes. If you did not ask to reset your password, ignore this email: your password stays as it is.\n`,
  }),
  sign_in: (code) => ({
    subject: `Your sign-in code: ${code}`,
    text: `Your sign-in code is ${code}.\n\nIt is valid for ${CODE_MINUTES} minutes. If you did not ask to sign in, ignore this email.\n`,
  }),
  reset_token: () => {
    throw new Error('reset tokens are handed out, never mailed');
  },
  magic_link: () => {
    throw new Error('magic links are mailed by MagicLinks');
  },
};
