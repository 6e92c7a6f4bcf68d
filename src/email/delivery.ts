import type { Mail, Mailer } from '../auth/mailer.js';
import type { Db, Queryable } from '../db/types.js';
import type { JobContext, Jobs } from '../jobs/index.js';
import type { MessageStore } from './messages.js';

export const SEND_QUEUE = 'email-send';
const RETENTION_QUEUE = 'email-retention';
/** An attempt runs at most 120 s (the job's expiry, see policy()); one begun 10 minutes ago has ended. */
const STRANDED_AFTER_SECONDS = 600;

export interface DeliveryOptions {
  /** Attempts per mail, the first included (EMAIL_MAX_ATTEMPTS). */
  maxAttempts: number;
  /** The first retry's delay; each next one doubles, with jitter (EMAIL_RETRY_DELAY_SECONDS). */
  retryDelaySeconds: number;
  /** Sent and failed mails are deleted after this many days (EMAIL_RETENTION_DAYS). */
  retentionDays: number;
  /**
   * Where attempts and outcomes are told: every line to the log store; the last failure ("gave
   * up") at error level, which the composition root also prints to stdout.
   */
  report: (level: 'info' | 'warn' | 'error', msg: string, fields: Record<string, unknown>) => void;
}

/** The SMTP error in one line, without the mail. */
function errorText(err: unknown): string {
  const e = err as { message?: string; code?: string; responseCode?: number };
  return [e?.code, e?.responseCode, e?.message ?? String(err)].filter(Boolean).join(' ').slice(0, 500);
}

/**
 * Mail through the job queue: each mail is a row of email.messages and a job that carries
 * only its id. An attempt is counted before it is made; a failure is retried with back-off
 * (EMAIL_RETRY_DELAY_SECONDS doubling, over hours by default) until EMAIL_MAX_ATTEMPTS, then
 * the mail is marked failed, reported at error level, and can be resent. A mail with a sign-in
 * code or link is not sent (nor kept) past the code's expiry.
 */
export class EmailDelivery {
  constructor(
    private readonly db: Db,
    private readonly jobs: Jobs,
    private readonly store: MessageStore,
    private readonly mailer: Mailer,
    private readonly opts: DeliveryOptions,
  ) {}

  async start(): Promise<void> {
    await this.jobs.work<{ messageId: string }>(SEND_QUEUE, { concurrency: 4 }, (job) => this.deliver(job));
    await this.jobs.work(RETENTION_QUEUE, { concurrency: 1 }, () => this.sweep());
    await this.jobs.boss.schedule(RETENTION_QUEUE, '*/10 * * * *');
  }

  /**
   * Every 10 minutes: old mail pruned, and a mail whose last attempt was cut short (no handler
   * saw it end, so it would stay queued) given up on, as the last failed attempt would have.
   */
  async sweep(): Promise<{ pruned: number; stranded: number }> {
    const stranded = await this.store.failStranded(this.opts.maxAttempts, STRANDED_AFTER_SECONDS);
    for (const m of stranded) this.gaveUp({ messageId: m.id, attempt: m.attempts }, 'the last attempt was cut short');
    return { pruned: await this.store.prune(this.opts.retentionDays), stranded: stranded.length };
  }

  /** The line of a mail given up on: error level, so stdout has it at LOG_LEVEL=warn. */
  private gaveUp(fields: Record<string, unknown>, error: string): void {
    this.opts.report('error', 'email: gave up on a mail', { ...fields, error });
  }

  private policy() {
    return {
      retryLimit: this.opts.maxAttempts - 1,
      retryDelaySeconds: this.opts.retryDelaySeconds,
      retryBackoff: true,
      expireInSeconds: 120,
    };
  }

  /** Stores the mail and enqueues its first attempt, in one transaction; its id. */
  async enqueue(m: { kind: 'raw' | 'auth'; caller: string; mail: Mail; expiresAt: Date | null }): Promise<string> {
    return this.db.transaction(async (tx) => {
      const id = await this.store.insert(m, tx);
      await this.jobs.send(SEND_QUEUE, { messageId: id }, this.policy(), tx);
      return id;
    });
  }

  /** Queues a failed mail again with a fresh set of attempts (in `tx`); false when it cannot be. */
  async requeue(id: string, tx: Queryable): Promise<boolean> {
    if (!(await this.store.requeue(id, tx))) return false;
    await this.jobs.send(SEND_QUEUE, { messageId: id }, this.policy(), tx);
    return true;
  }

  /** One attempt; a failure with attempts left throws, so the job library retries it later. */
  private async deliver(job: JobContext<{ messageId: string }>): Promise<unknown> {
    const id = job.data.messageId;
    const claimed = await this.store.claim(id);
    if (!claimed) return null; // sent, given up, or erased meanwhile
    const fields = { messageId: id, kind: claimed.kind, attempt: claimed.attempts };
    if (claimed.expired) {
      const error = 'The sign-in code or link in it expired before the mail could be sent.';
      await this.store.failed(id, error);
      this.gaveUp(fields, error);
      return null;
    }
    try {
      await this.mailer.send(claimed.mail, {
        info: (obj, msg) => this.opts.report('info', msg ?? 'email', obj as Record<string, unknown>),
        error: () => {},
      });
    } catch (err) {
      const error = errorText(err);
      if (job.retryCount + 1 >= this.opts.maxAttempts) {
        await this.store.failed(id, error);
        this.gaveUp(fields, error);
        return null;
      }
      await this.store.attemptFailed(id, error);
      this.opts.report('warn', 'email: the SMTP server refused or failed; the mail will be retried', {
        ...fields,
        error,
      });
      throw err;
    }
    await this.store.sent(id);
    this.opts.report('info', 'email: sent', fields);
    return null;
  }
}
