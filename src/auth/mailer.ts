import nodemailer, { type Transporter } from 'nodemailer';

/** One outgoing email, plain text. */
export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/** The log a mailer reports to (pino's signature: object first, then message). */
export interface MailLog {
  info(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** Sends email. `close()` waits for mail still in flight, then releases connections. */
export interface Mailer {
  readonly kind: 'smtp' | 'log';
  send(mail: Mail, log: MailLog): Promise<void>;
  close(): Promise<void>;
}

/** Tracks sends in flight so close() can let them finish (bounded wait). */
class InFlight {
  private readonly pending = new Set<Promise<unknown>>();
  track<T>(p: Promise<T>): Promise<T> {
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p)).catch(() => {});
    return p;
  }
  async drain(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.pending]),
      new Promise((r) => {
        timer = setTimeout(r, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
  }
}

/** Mail through nodemailer to SMTP_URL (smtp:// or smtps://, credentials in the URL). */
export class SmtpMailer implements Mailer {
  readonly kind = 'smtp';
  private readonly transport: Transporter;
  private readonly inFlight = new InFlight();

  constructor(
    smtpUrl: string,
    private readonly from: string,
  ) {
    // Connections are opened per message: mail is rare, and a pool would hold sockets open.
    this.transport = nodemailer.createTransport(smtpUrl);
  }

  send(mail: Mail): Promise<void> {
    return this.inFlight.track(
      this.transport.sendMail({ from: this.from, to: mail.to, subject: mail.subject, text: mail.text }).then(() => {}),
    );
  }

  /** Checks that the SMTP server answers (for the health check). */
  async verify(): Promise<void> {
    await this.transport.verify();
  }

  async close(): Promise<void> {
    await this.inFlight.drain(5000);
    this.transport.close();
  }
}

/**
 * Development fallback when SMTP_URL is unset: the mail, including the code it carries, is
 * written to the log at info level so a developer can read it there. Nothing else secret
 * is in a mail. Not for production: anyone who reads the log can use the codes.
 */
export class LogMailer implements Mailer {
  readonly kind = 'log';
  async send(mail: Mail, log: MailLog): Promise<void> {
    log.info({ mail: { to: mail.to, subject: mail.subject, text: mail.text } }, 'SMTP_URL is not set: email written to the log instead of sent');
  }
  async close(): Promise<void> {}
}

export function createMailer(smtpUrl: string | null, from: string): Mailer {
  return smtpUrl ? new SmtpMailer(smtpUrl, from) : new LogMailer();
}
