import type { Db, Queryable } from '../db/types.js';
import type { Mail } from '../auth/mailer.js';

export type MessageStatus = 'queued' | 'sent' | 'failed';

/**
 * A mail as the admin API lists it: metadata only, never its body. The subject of a mail that
 * carries a sign-in code or link (`kind: "auth"`) is shown with its codes and links masked.
 */
export interface EmailMessage {
  id: string;
  /** `raw`: sent through the email API; `auth`: a verification, reset or sign-in mail (carries a code or link). */
  kind: 'raw' | 'auth';
  /** Who sent it: `admin`, `user:<id>`, `function:<slug>`, or `auth`. */
  caller: string;
  to: string[];
  subject: string;
  status: MessageStatus;
  attempts: number;
  lastError: string | null;
  /** Whether its content is still held, so that it can be resent. */
  resendable: boolean;
  createdAt: string;
  lastAttemptAt: string | null;
  sentAt: string | null;
  failedAt: string | null;
  /** Auth mails: when the code or link in it expires (it is not sent after that). */
  expiresAt: string | null;
}

const COLUMNS = `id, kind, caller, recipients as "to", subject, status, attempts, last_error as "lastError", mail is not null as resendable,
  created_at as "createdAt", last_attempt_at as "lastAttemptAt", sent_at as "sentAt", failed_at as "failedAt", expires_at as "expiresAt"`;

const iso = (r: Record<string, unknown>): EmailMessage => {
  const out: Record<string, unknown> = { ...r };
  for (const k of ['createdAt', 'lastAttemptAt', 'sentAt', 'failedAt', 'expiresAt']) {
    const v = out[k];
    out[k] = v === null || v === undefined ? null : new Date(v as string).toISOString();
  }
  return out as unknown as EmailMessage;
};

/** A subject with what could be a code (4 or more digits in a row) or a link masked. */
export function maskSubject(subject: string): string {
  return subject.replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, '[link]').replace(/\d{4,}/g, (d) => '•'.repeat(d.length));
}

const STRANDED = 'The last attempt was cut short (Plinth stopped during it): the mail may not have arrived.';

/** One attempt's claim: the mail to send, or null when it was sent, failed or is being resent. */
export interface Claimed {
  mail: Mail;
  kind: 'raw' | 'auth';
  expired: boolean;
  attempts: number;
}

/** The table email.messages (migration 0320): every mail sent through the job queue. */
export class MessageStore {
  constructor(private readonly db: Db) {}

  async insert(
    m: { kind: 'raw' | 'auth'; caller: string; mail: Mail; expiresAt: Date | null },
    tx: Queryable = this.db,
  ): Promise<string> {
    const to = Array.isArray(m.mail.to) ? m.mail.to : [m.mail.to];
    const subject = m.kind === 'auth' ? maskSubject(m.mail.subject) : m.mail.subject;
    const { rows } = await tx.query<{ id: string }>(
      `insert into email.messages (kind, caller, recipients, subject, mail, expires_at) values ($1, $2, $3, $4, $5, $6) returning id`,
      [m.kind, m.caller, to, subject, JSON.stringify(m.mail), m.expiresAt],
    );
    return rows[0]!.id;
  }

  /** Counts an attempt before it is made (an attempt cut by a crash still counts). */
  async claim(id: string): Promise<Claimed | null> {
    const { rows } = await this.db.query<{ mail: Mail; kind: 'raw' | 'auth'; expired: boolean; attempts: number }>(
      `update email.messages set attempts = attempts + 1, last_attempt_at = clock_timestamp()
        where id = $1 and status = 'queued' and mail is not null
        returning mail, kind, coalesce(expires_at <= now(), false) as expired, attempts`,
      [id],
    );
    return rows[0] ?? null;
  }

  /** Sent: its content is erased (nothing left to send). */
  async sent(id: string): Promise<void> {
    await this.db.query(
      `update email.messages set status = 'sent', sent_at = clock_timestamp(), last_error = null, mail = null where id = $1`,
      [id],
    );
  }

  async attemptFailed(id: string, error: string): Promise<void> {
    await this.db.query(`update email.messages set last_error = $2 where id = $1`, [id, error.slice(0, 1000)]);
  }

  /** Given up: an auth mail's content (its code or link) is erased; a raw mail's is kept for a resend. */
  async failed(id: string, error: string): Promise<void> {
    await this.db.query(
      `update email.messages set status = 'failed', failed_at = clock_timestamp(), last_error = $2, mail = case when kind = 'auth' then null else mail end where id = $1`,
      [id, error.slice(0, 1000)],
    );
  }

  /**
   * Mails whose last attempt was cut short (Plinth stopped during it, so no handler saw it end):
   * queued with every attempt spent, the last one begun `graceSeconds` ago or more. Marked
   * failed (resendable as any failed mail); their ids and attempts.
   */
  async failStranded(maxAttempts: number, graceSeconds: number): Promise<{ id: string; attempts: number }[]> {
    const { rows } = await this.db.query<{ id: string; attempts: number }>(
      `update email.messages
          set status = 'failed', failed_at = clock_timestamp(),
              last_error = coalesce(last_error || '; ', '') || $3,
              mail = case when kind = 'auth' then null else mail end
        where status = 'queued' and attempts >= $1 and last_attempt_at <= now() - make_interval(secs => $2)
        returning id, attempts`,
      [maxAttempts, graceSeconds, STRANDED],
    );
    return rows;
  }

  async list(status: MessageStatus | undefined, limit: number, offset: number): Promise<EmailMessage[]> {
    const { rows } = await this.db.query<Record<string, unknown>>(
      `select ${COLUMNS} from email.messages where $1::text is null or status = $1 order by created_at desc, id limit $2 offset $3`,
      [status ?? null, limit, offset],
    );
    return rows.map(iso);
  }

  async get(id: string, tx: Queryable = this.db): Promise<EmailMessage | null> {
    const { rows } = await tx.query<Record<string, unknown>>(`select ${COLUMNS} from email.messages where id = $1`, [
      id,
    ]);
    return rows[0] ? iso(rows[0]) : null;
  }

  /** A failed mail whose content is held, queued again; null when it is not such a mail. */
  async requeue(id: string, tx: Queryable): Promise<boolean> {
    const r = await tx.query(
      `update email.messages set status = 'queued', failed_at = null where id = $1 and status = 'failed' and mail is not null and (expires_at is null or expires_at > now())`,
      [id],
    );
    return r.rowCount > 0;
  }

  /**
   * Retention: mails older than `days` are deleted, and the content of auth mails whose code
   * has expired is erased whatever their state (they can no longer be sent).
   */
  async prune(days: number): Promise<number> {
    await this.db.query(
      `update email.messages
          set mail = null,
              status = case when status = 'queued' then 'failed' else status end,
              failed_at = case when status = 'queued' then clock_timestamp() else failed_at end,
              last_error = case when status = 'queued' then 'The sign-in code or link in it expired before the mail could be sent.' else last_error end
        where mail is not null and expires_at <= now()`,
    );
    const r = await this.db.query(
      `delete from email.messages where created_at < now() - make_interval(days => $1) and status <> 'queued'`,
      [days],
    );
    return r.rowCount;
  }
}
