import type { Identity } from '../auth/identity.js';
import type { Mail, Mailer, MailLog } from '../auth/mailer.js';
import type { Jobs } from '../jobs/index.js';
import { AppError } from '../errors/index.js';
import type { Counter } from '../lib/counter.js';
import { TemplateStore } from './templates.js';

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
const SEND_QUEUE = 'email-send';
const SEND_OPTIONS = { retryLimit: 3, retryDelaySeconds: 5, retryBackoff: true, expireInSeconds: 120 };

export interface EmailOptions {
  allowUsers: boolean;
  perMinute: number;
  /** NODE_ENV=production: without SMTP the API refuses instead of writing mail to the log. */
  production: boolean;
}

/** A plain-text part from HTML, for clients that show no HTML. */
function textOf(html: string): string {
  return html.replace(/<style[\s\S]*?<\/style>|<script[\s\S]*?<\/script>/gi, '').replace(/<br\s*\/?>|<\/p>/gi, '\n').replace(/<[^>]+>/g, '').replace(/\n{3,}/g, '\n\n').trim();
}

/** The email API: raw sends by admins (and users when allowed), per-caller limits, and the auth templates. */
export class EmailService {
  readonly templates: TemplateStore;
  private jobs: Jobs | null = null;
  /**
   * The mailer the auth emails (verification, reset, codes, magic links) go through: with the
   * job queue running and SMTP configured, a send is a job (survives a restart, retried with
   * back-off like send-raw); otherwise (PGlite, the mail catcher, a full queue) sent at once.
   */
  readonly authMailer: Mailer;

  constructor(
    private readonly deps: { mailer: Mailer; counter: Counter; templates: TemplateStore },
    private readonly opts: EmailOptions,
  ) {
    this.templates = deps.templates;
    this.authMailer = {
      kind: deps.mailer.kind,
      send: async (mail, log) => {
        if (this.jobs && deps.mailer.kind === 'smtp' && !(await this.jobs.full())) {
          await this.jobs.send(SEND_QUEUE, { mail }, SEND_OPTIONS);
          return;
        }
        await deps.mailer.send(mail, log);
      },
      // The mailer itself is closed by its owner (the composition root).
      close: async () => {},
    };
  }

  /**
   * From now on sends go through the job queue: the API answers once the mail is queued, and
   * a send survives a restart and is retried (3 times, back-off) when SMTP fails; failures are logged.
   */
  async start(jobs: Jobs, log: MailLog): Promise<void> {
    await jobs.work<{ mail: Mail }>(SEND_QUEUE, { concurrency: 4 }, async (job) => {
      try {
        await this.deps.mailer.send(job.data.mail, log);
      } catch (err) {
        log.error({ err: (err as Error)?.message, attempt: job.retryCount + 1 }, 'email: the SMTP server refused or failed');
        throw err;
      }
      return null;
    });
    this.jobs = jobs;
  }

  async sendRaw(identity: Identity, mail: RawEmail, log: MailLog): Promise<void> {
    if (identity.kind !== 'admin' && identity.kind !== 'function' && !(identity.kind === 'user' && this.opts.allowUsers)) throw new AppError('EMAIL_NOT_ALLOWED');
    if (this.deps.mailer.kind === 'log' && this.opts.production) throw new AppError('EMAIL_NOT_CONFIGURED');
    const to = Array.isArray(mail.to) ? mail.to : [mail.to];
    const all = to.length + (mail.cc?.length ?? 0) + (mail.bcc?.length ?? 0);
    if (!to.length || all > MAX_RECIPIENTS) {
      throw new AppError('INVALID_INPUT', { message: `An email goes to 1 to ${MAX_RECIPIENTS} recipients (to, cc and bcc together); this one has ${all}.` });
    }
    if (!mail.html && !mail.text) throw new AppError('INVALID_INPUT', { message: 'Give the email a body: html, text or both.' });
    const who = identity.kind === 'user' ? `user:${identity.userId}` : identity.kind === 'function' ? `function:${identity.slug}` : 'admin';
    const { count, resetMs } = await this.deps.counter.hit(`email:${who}`, 60_000);
    if (count > this.opts.perMinute) {
      throw new AppError('RATE_LIMITED', { message: `At most ${this.opts.perMinute} emails a minute per caller (EMAIL_PER_MINUTE); try again in ${Math.ceil(resetMs / 1000)} s.` });
    }
    const m: Mail = { to, cc: mail.cc, bcc: mail.bcc, subject: mail.subject, html: mail.html, text: mail.text ?? textOf(mail.html!), replyTo: mail.replyTo, fromName: mail.from };
    if (this.jobs) {
      if (await this.jobs.full()) throw new AppError('QUEUE_FULL');
      await this.jobs.send(SEND_QUEUE, { mail: m }, SEND_OPTIONS);
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
}
