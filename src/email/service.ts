import type { Identity } from '../auth/identity.js';
import type { Mail, Mailer, MailLog } from '../auth/mailer.js';
import { CODE_TTL_SECONDS } from '../auth/codes.js';
import type { Db } from '../db/types.js';
import type { Jobs } from '../jobs/index.js';
import { AppError } from '../errors/index.js';
import type { Counter } from '../lib/counter.js';
import { EmailDelivery, type DeliveryOptions } from './delivery.js';
import { type EmailMessage, MessageStore, type MessageStatus } from './messages.js';
import type { TemplateStore } from './templates.js';

export type { EmailMessage, MessageStatus } from './messages.js';

/** What POST /api/email/send-raw takes (InsForge's shape). */
export interface RawEmail {
  to: string | string[];
  cc?: string[];
  bcc?: string[];
  subject: string;
  html?: string;
  text?: string;
  /** A display name; the address is always MAIL_FROM's. */
  from?: string;
  replyTo?: string;
}

export const MAX_RECIPIENTS = 50;

export interface EmailOptions {
  allowUsers: boolean;
  perMinute: number;
  /** NODE_ENV=production: without SMTP the API refuses instead of writing mail to the log. */
  production: boolean;
  /** Retries and retention of queued mail (EMAIL_MAX_ATTEMPTS, EMAIL_RETRY_DELAY_SECONDS, EMAIL_RETENTION_DAYS). */
  maxAttempts: number;
  retryDelaySeconds: number;
  retentionDays: number;
}

/** A plain-text part from HTML, for clients that show no HTML. */
function textOf(html: string): string {
  return html
    .replace(/<style[\s\S]*?<\/style>|<script[\s\S]*?<\/script>/gi, '')
    .replace(/<br\s*\/?>|<\/p>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** The email API: raw sends by admins (and users when allowed), per-caller limits, the auth templates, and the queued mail. */
export class EmailService {
  readonly templates: TemplateStore;
  private readonly messages: MessageStore;
  private delivery: EmailDelivery | null = null;
  private jobs: Jobs | null = null;
  /**
   * The mailer the auth emails (verification, reset, codes, magic links) go through: with the
   * job queue running and SMTP configured, a send is a queued mail (survives a restart,
   * retried with back-off until its code expires); otherwise (PGlite, the mail catcher, a full
   * queue) sent at once.
   */
  readonly authMailer: Mailer;

  constructor(
    private readonly deps: { db: Db; mailer: Mailer; counter: Counter; templates: TemplateStore },
    private readonly opts: EmailOptions,
  ) {
    this.templates = deps.templates;
    this.messages = new MessageStore(deps.db);
    this.authMailer = {
      kind: deps.mailer.kind,
      send: async (mail, log) => {
        if (this.delivery && this.jobs && deps.mailer.kind === 'smtp' && !(await this.jobs.full())) {
          await this.delivery.enqueue({
            kind: 'auth',
            caller: 'auth',
            mail,
            expiresAt: new Date(Date.now() + CODE_TTL_SECONDS * 1000),
          });
          return;
        }
        await deps.mailer.send(mail, log);
      },
      // The mailer itself is closed by its owner (the composition root).
      close: async () => {},
    };
  }

  /**
   * From now on sends go through the job queue: the API answers once the mail is queued; a
   * send survives a restart and is retried with back-off, then marked failed (docs/email.md).
   */
  async start(jobs: Jobs, report: DeliveryOptions['report']): Promise<void> {
    const delivery = new EmailDelivery(this.deps.db, jobs, this.messages, this.deps.mailer, { ...this.opts, report });
    await delivery.start();
    this.jobs = jobs;
    this.delivery = delivery;
  }

  async sendRaw(identity: Identity, mail: RawEmail, log: MailLog): Promise<void> {
    if (
      identity.kind !== 'admin' &&
      identity.kind !== 'function' &&
      !(identity.kind === 'user' && this.opts.allowUsers)
    )
      throw new AppError('EMAIL_NOT_ALLOWED');
    if (this.deps.mailer.kind === 'log' && this.opts.production) throw new AppError('EMAIL_NOT_CONFIGURED');
    const to = Array.isArray(mail.to) ? mail.to : [mail.to];
    const all = to.length + (mail.cc?.length ?? 0) + (mail.bcc?.length ?? 0);
    if (!to.length || all > MAX_RECIPIENTS) {
      throw new AppError('INVALID_INPUT', {
        message: `An email goes to 1 to ${MAX_RECIPIENTS} recipients (to, cc and bcc together); this one has ${all}.`,
      });
    }
    if (!mail.html && !mail.text)
      throw new AppError('INVALID_INPUT', { message: 'Give the email a body: html, text or both.' });
    const who =
      identity.kind === 'user'
        ? `user:${identity.userId}`
        : identity.kind === 'function'
          ? `function:${identity.slug}`
          : 'admin';
    const { count, resetMs } = await this.deps.counter.hit(`email:${who}`, 60_000);
    if (count > this.opts.perMinute) {
      throw new AppError('RATE_LIMITED', {
        message: `At most ${this.opts.perMinute} emails a minute per caller (EMAIL_PER_MINUTE); try again in ${Math.ceil(resetMs / 1000)} s.`,
      });
    }
    const m: Mail = {
      to,
      cc: mail.cc,
      bcc: mail.bcc,
      subject: mail.subject,
      html: mail.html,
      text: mail.text ?? textOf(mail.html!),
      replyTo: mail.replyTo,
      fromName: mail.from,
    };
    if (this.delivery && this.jobs) {
      if (await this.jobs.full()) throw new AppError('QUEUE_FULL');
      await this.delivery.enqueue({ kind: 'raw', caller: who, mail: m, expiresAt: null });
      return;
    }
    // No job queue (PGlite): sent in the request.
    try {
      await this.deps.mailer.send(m, log);
    } catch (err) {
      log.error({ err: (err as Error)?.message }, 'email: the SMTP server refused or failed');
      throw new AppError('SERVICE_UNAVAILABLE', { message: 'The mail server did not take the email.', cause: err });
    }
  }

  /** Queued mail, newest first, metadata only (GET /api/email/messages, MCP list-emails). */
  listMessages(status: MessageStatus | undefined, limit = 50, offset = 0): Promise<EmailMessage[]> {
    return this.messages.list(status, limit, offset);
  }

  async getMessage(id: string): Promise<EmailMessage> {
    const m = await this.messages.get(id);
    if (!m) throw new AppError('EMAIL_MESSAGE_NOT_FOUND', { message: `No mail with id "${id}".` });
    return m;
  }

  /** A failed mail queued again, with a fresh set of attempts (POST /api/email/messages/{id}/resend, MCP resend-email). */
  async resend(id: string): Promise<EmailMessage> {
    const delivery = this.delivery;
    if (!delivery) throw new AppError('JOBS_UNAVAILABLE');
    const m = await this.getMessage(id);
    if (m.status !== 'failed' || !m.resendable) throw notResendable(m);
    if (await this.jobs!.full()) throw new AppError('QUEUE_FULL');
    return this.deps.db.transaction(async (tx) => {
      if (!(await delivery.requeue(id, tx))) throw notResendable(m);
      return (await this.messages.get(id, tx))!;
    });
  }
}

function notResendable(m: EmailMessage): AppError {
  const why =
    m.status === 'queued'
      ? 'it is still queued (it is being sent or retried)'
      : m.status === 'sent'
        ? 'it was sent (its content is not kept after sending)'
        : m.kind === 'auth'
          ? 'it carried a sign-in code or link, which is not kept once the mail failed or the code expired: the user asks for a new one'
          : 'its content is no longer held';
  return new AppError('EMAIL_NOT_RESENDABLE', { message: `The mail ${m.id} cannot be resent: ${why}.` });
}
