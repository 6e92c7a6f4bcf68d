// A mailed code: issued for a purpose and mailed in the background. Sign-up, the resets, the
// sign-in code and an anonymous user's conversion all send theirs here.
import type { CodePurpose } from './codes.js';
import { type AuthContext, type AuthServiceDeps, CODE_MAILS, CODE_MINUTES } from './context.js';
import type { Mail } from './mailer.js';
import type { UserRow } from './users.js';

export class CodeMail {
  constructor(private readonly deps: Pick<AuthServiceDeps, 'db' | 'codes' | 'mailer' | 'templates'>) {}

  /**
   * Issues a code and mails it. The mail is sent in the background (a failure is logged), so
   * the answer takes the same time whether or not a mail went out. Callers count the mail
   * against the per-address limit first, before anything changes.
   */
  async send(row: UserRow, purpose: CodePurpose, ctx: AuthContext): Promise<void> {
    const code = await this.deps.codes.issue(this.deps.db, row.id, purpose);
    const mail: Mail = {
      to: row.email,
      ...((await this.deps
        .templates?.(purpose, { code, minutes: String(CODE_MINUTES), email: row.email })
        .catch(() => null)) ?? CODE_MAILS[purpose](code)),
    };
    this.deps.mailer
      .send(mail, ctx.log)
      .catch((err) => ctx.log.error({ err, to: row.email }, 'email could not be sent'));
  }
}
