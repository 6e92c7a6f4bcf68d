// The body of POST /api/email/send-raw (InsForge's shape), one schema for every face that sends
// raw mail: the HTTP route and the MCP tool.
import { Type } from 'typebox';
import { MAX_RECIPIENTS } from './service.js';

const Address = Type.String({ format: 'email', maxLength: 320 });
const Recipients = Type.Array(Address, { maxItems: MAX_RECIPIENTS });

export const SendRawBody = Type.Object(
  {
    to: Type.Union([Address, Type.Array(Address, { minItems: 1, maxItems: MAX_RECIPIENTS })]),
    cc: Type.Optional(Recipients),
    bcc: Type.Optional(Recipients),
    subject: Type.String({ minLength: 1, maxLength: 998 }),
    html: Type.Optional(Type.String({ maxLength: 1_000_000 })),
    text: Type.Optional(Type.String({ maxLength: 1_000_000 })),
    from: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Display name; the address is MAIL_FROM' }),
    ),
    replyTo: Type.Optional(Address),
  },
  { additionalProperties: false },
);

const Status = Type.Union([Type.Literal('queued'), Type.Literal('sent'), Type.Literal('failed')]);

/** The query of GET /api/email/messages and the input of the MCP tool list-emails. */
export const MessageQuery = Type.Object(
  {
    status: Type.Optional(Status),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
    offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
  },
  { additionalProperties: false },
);

const Time = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

/** One queued mail as listed: metadata only (docs/email.md). */
export const Message = Type.Object({
  id: Type.String({ format: 'uuid' }),
  kind: Type.Union([Type.Literal('raw'), Type.Literal('auth')], {
    description: 'auth: a verification, reset or sign-in mail (its code or link is never shown)',
  }),
  caller: Type.String({ description: 'admin, user:<id>, function:<slug> or auth' }),
  to: Type.Array(Type.String()),
  subject: Type.String({ description: 'For auth mails, with codes and links masked' }),
  status: Status,
  attempts: Type.Integer({ description: 'Every attempt made, one cut by a crash included' }),
  lastError: Type.Union([Type.String(), Type.Null()]),
  resendable: Type.Boolean({
    description: 'A failed mail whose content is still held: POST .../resend sends it again',
  }),
  createdAt: Type.String({ format: 'date-time' }),
  lastAttemptAt: Time,
  sentAt: Time,
  failedAt: Time,
  expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'Auth mails: when the code or link in it expires; it is not sent after that',
  }),
});
