import { Type } from 'typebox';
import { tool, type ToolContext } from '../types.js';
import { MAX_RECIPIENTS, type RawEmail } from '../../email/service.js';

const Address = Type.String({ format: 'email', maxLength: 320 });
const Recipients = Type.Array(Address, { maxItems: MAX_RECIPIENTS });

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
    input: Type.Object(
      {
        to: Type.Union([Address, Type.Array(Address, { minItems: 1, maxItems: MAX_RECIPIENTS })]),
        cc: Type.Optional(Recipients),
        bcc: Type.Optional(Recipients),
        subject: Type.String({ minLength: 1, maxLength: 998 }),
        html: Type.Optional(Type.String({ maxLength: 1_000_000 })),
        text: Type.Optional(Type.String({ maxLength: 1_000_000 })),
        from: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Display name; the address is MAIL_FROM' })),
        replyTo: Type.Optional(Address),
      },
      { additionalProperties: false },
    ),
    readOnly: false,
    run: async (mail, ctx) => {
      await ctx.services.email.sendRaw({ kind: 'admin' }, mail, mailLog(ctx));
      return `Email "${mail.subject}" accepted for ${Array.isArray(mail.to) ? mail.to.join(', ') : mail.to}`;
    },
  }),
];
