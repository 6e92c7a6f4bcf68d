import { Type } from 'typebox';
import { tool, type ToolContext } from '../types.js';
import { json, table } from '../format.js';
import type { MessageStatus, RawEmail } from '../../email/service.js';
import { MessageQuery, SendRawBody } from '../../email/schema.js';

/** The mail service's log lines go to the log store's email source (a tool call has no request logger). */
const mailLog = (ctx: ToolContext) => ({
  info: (obj: object, msg?: string) => ctx.services.logs.write('email', 'info', msg ?? 'email', { ...obj, via: 'mcp' }),
  error: (obj: object, msg?: string) =>
    ctx.services.logs.write('email', 'error', msg ?? 'email', { ...obj, via: 'mcp' }),
});

/** Email: the email service of POST /api/email/send-raw and /api/email/messages, as the admin. */
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
  tool<{ status?: MessageStatus; limit?: number; offset?: number }>({
    name: 'list-emails',
    description:
      'Mail sent through the queue, newest first (same as GET /api/email/messages): status queued, sent or failed, attempts, last SMTP error, times. ' +
      'Metadata only: never a body, and sign-in mails with their codes masked. A failed mail with resendable true can be sent again with resend-email.',
    input: MessageQuery,
    readOnly: true,
    run: async ({ status, limit = 50, offset = 0 }, ctx) => {
      const ms = await ctx.services.email.listMessages(status, limit, offset);
      return table(
        ms.map((m) => ({
          id: m.id,
          status: m.status,
          kind: m.kind,
          to: m.to.join(', '),
          subject: m.subject,
          attempts: m.attempts,
          lastError: m.lastError,
          resendable: m.resendable,
          createdAt: m.createdAt,
        })),
        { limit, offset },
      );
    },
  }),
  tool<{ id: string }>({
    name: 'resend-email',
    description:
      'Queue a failed mail again with a fresh set of attempts (same as POST /api/email/messages/{id}/resend). ' +
      'Only failed mails whose content is still held (resendable in list-emails); sign-in mails are not kept: the user asks for a new code.',
    input: Type.Object(
      { id: Type.String({ format: 'uuid', description: 'The mail id (list-emails shows it)' }) },
      { additionalProperties: false },
    ),
    readOnly: false,
    run: async ({ id }, ctx) => json(await ctx.services.email.resend(id)),
  }),
];
