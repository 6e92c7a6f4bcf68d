import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string[];
  raw: string;
}

/** A real SMTP server on loopback that keeps every mail it receives. */
export async function startSmtp(): Promise<{
  url: string;
  mails: ReceivedMail[];
  /** Waits for a mail to `to` whose raw text matches `re`, after the `skip` earlier ones. */
  waitForCode(to: string, skip?: number): Promise<string>;
  count(to: string): number;
  close(): Promise<void>;
}> {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      let raw = '';
      stream.setEncoding('utf8');
      stream.on('data', (c: string) => (raw += c));
      stream.on('end', () => {
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()), raw });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as { port: number }).port;
  const forTo = (to: string) => mails.filter((m) => m.to.includes(to.toLowerCase()));
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    count: (to) => forTo(to).length,
    async waitForCode(to, skip = 0) {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const m = forTo(to)[skip];
        if (m) {
          // The subject line carries the code; take it from there (bodies may be encoded).
          const code = /^Subject: .*?(\d{6})\s*$/m.exec(m.raw)?.[1];
          if (!code) throw new Error(`no code in mail:\n${m.raw}`);
          return code;
        }
        if (Date.now() > deadline) throw new Error(`no mail #${skip + 1} to ${to} arrived`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
