import type { Transporter } from 'nodemailer';

/** One outgoing email: plain text, with an HTML part and more recipients when given (the email API). */
export interface Mail {
  to: string | string[];
  subject: string;
  text: string;
  html?: string;
  cc?: string[];
  bcc?: string[];
  replyTo?: string;
  /** A display name in front of MAIL_FROM's address. */
  fromName?: string;
}

/** MAIL_FROM with its display name replaced by `name` (quoted for the header). */
function fromWithName(from: string, name: string | undefined): string {
  if (!name) return from;
  const address = /<([^>]+)>/.exec(from)?.[1] ?? from.trim();
  return `"${name.replace(/["\\\r\n]/g, '')}" <${address}>`;
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

/**
 * Mail through nodemailer to SMTP_URL (smtp:// or smtps://, credentials in the URL). nodemailer
 * is imported on the first send or check, so a start (with or without SMTP) does not load it.
 */
export class SmtpMailer implements Mailer {
  readonly kind = 'smtp';
  private transporter: Promise<Transporter> | null = null;
  private readonly inFlight = new InFlight();

  constructor(
    private readonly smtpUrl: string,
    private readonly from: string,
  ) {}

  private transport(): Promise<Transporter> {
    // Connections are opened per message: mail is rare, and a pool would hold sockets open.
    // An attempt ends well inside the job queue's 120 s for it (src/email/delivery.ts), so a
    // hung server never has a retry start while the first send is still in flight (nodemailer's
    // default socket timeout is 10 minutes). Timeouts in SMTP_URL's query win.
    this.transporter ??= import('nodemailer').then(({ default: nodemailer }) =>
      nodemailer.createTransport({
        url: this.smtpUrl,
        connectionTimeout: 20_000,
        greetingTimeout: 20_000,
        socketTimeout: 60_000,
      }),
    );
    return this.transporter;
  }

  send(mail: Mail): Promise<void> {
    return this.inFlight.track(
      this.transport()
        .then((transport) =>
          transport.sendMail({
            from: fromWithName(this.from, mail.fromName),
            to: mail.to,
            cc: mail.cc,
            bcc: mail.bcc,
            replyTo: mail.replyTo,
            subject: mail.subject,
            text: mail.text,
            html: mail.html,
          }),
        )
        .then(() => {}),
    );
  }

  /** Checks that the SMTP server answers (for the health check). */
  async verify(): Promise<void> {
    await (await this.transport()).verify();
  }

  async close(): Promise<void> {
    await this.inFlight.drain(5000);
    (await this.transporter?.catch(() => null))?.close();
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
    log.info(
      { mail: { to: mail.to, cc: mail.cc, bcc: mail.bcc, subject: mail.subject, text: mail.text, html: mail.html } },
      'SMTP_URL is not set: email written to the log instead of sent',
    );
  }
  async close(): Promise<void> {}
}

export function createMailer(smtpUrl: string | null, from: string): Mailer {
  return smtpUrl ? new SmtpMailer(smtpUrl, from) : new LogMailer();
}
