import { tool, type ToolContext } from '../types.js';
import type { RawEmail } from '../../email/service.js';
import { SendRawBody } from '../../email/schema.js';

/** The mail service's log lines go to the log store's email source (a tool call has no request logger). */
const mailLog = (ctx: ToolContext) => ({
  info: (obj: object, msg?: string) => ctx.services.logs.write('email', 'info', msg ?? 'email', { ...obj, via: 'mcp' }),
  error: (obj: object, msg?: string) => ctx.services.logs.write('email', 'error', msg ?? 'email', { ...obj, via: 'mcp' }),
});

/** Email: the email service of POST /api/email/send-raw, as the admin. */
export const emailTools = [
  tool<RawEmail>({
    name: 'send-email',
    description:
      'Send an email through the configured SMTP server as the admin (same as POST /api/email/send-raw): to, subject and html and/or text. ' +
      'Without SMTP_URL (development) the mail is written to the server log instead.',
    input: SendRawBody,
    readOnly: false,
    run: async (mail, ctx) => {
      await ctx.services.email.sendRaw({ kind: 'admin' }, mail, mailLog(ctx));
      return `Email "${mail.subject}" accepted for ${Array.isArray(mail.to) ? mail.to.join(', ') : mail.to}`;
    },
  }),
];
