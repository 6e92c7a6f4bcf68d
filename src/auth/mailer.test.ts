import { describe, expect, it } from 'vitest';
import { LogMailer, SmtpMailer, createMailer } from './mailer.js';

describe('mailers', () => {
  it('picks SMTP when SMTP_URL is set, else the log', () => {
    expect(createMailer(null, 'a@b.c').kind).toBe('log');
    expect(createMailer('smtp://127.0.0.1:2525', 'a@b.c')).toBeInstanceOf(SmtpMailer);
  });

  it('the log mailer writes recipient, subject and text at info level, and nothing else', async () => {
    const lines: Array<[object, string | undefined]> = [];
    const log = { info: (o: object, m?: string) => lines.push([o, m]), error: () => expect.unreachable() };
    await new LogMailer().send({ to: 'a@example.com', subject: 'Code 123456', text: 'Your code is 123456.' }, log);
    expect(lines).toEqual([
      [
        { mail: { to: 'a@example.com', subject: 'Code 123456', text: 'Your code is 123456.' } },
        expect.stringContaining('SMTP_URL'),
      ],
    ]);
  });

  it('an unreachable SMTP server fails the send (the caller logs it) and close() still returns', async () => {
    const m = new SmtpMailer('smtp://127.0.0.1:1', 'a@b.c');
    await expect(m.send({ to: 'a@example.com', subject: 's', text: 't' })).rejects.toThrow();
    await m.close();
  });
});
