// A real SMTP server (the `smtp-server` package) on a fixed port that can be stopped and started
// again: mail sent while it is down fails with ECONNREFUSED, as with a mail server that is away.
import { SMTPServer } from 'smtp-server';
import { freePort } from './port.js';

export interface Smtp {
  port: number;
  /** What it received: the envelope's recipients and the raw message. */
  got: Array<{ to: string[]; raw: string }>;
  up(): Promise<void>;
  down(): Promise<void>;
}

/** An SMTP server on a free port, down until `up()` is called. */
export async function smtpServer(): Promise<Smtp> {
  const port = await freePort();
  const got: Smtp['got'] = [];
  let server: SMTPServer | null = null;
  return {
    port,
    got,
    async up() {
      server = new SMTPServer({
        authOptional: true,
        disabledCommands: ['STARTTLS', 'AUTH'],
        logger: false,
        onData(stream, session, callback) {
          let raw = '';
          stream.on('data', (c: Buffer) => (raw += c));
          stream.on('end', () => {
            got.push({ to: session.envelope.rcptTo.map((r) => r.address), raw });
            callback();
          });
        },
      });
      await new Promise<void>((res) => server!.listen(port, '127.0.0.1', res));
    },
    async down() {
      const s = server;
      server = null;
      if (s) await new Promise<void>((res) => s.close(() => res()));
    },
  };
}
