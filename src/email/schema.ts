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
    from: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Display name; the address is MAIL_FROM' })),
    replyTo: Type.Optional(Address),
  },
  { additionalProperties: false },
);
