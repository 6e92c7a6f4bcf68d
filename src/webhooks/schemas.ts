// The input of each webhook operation, declared once: the HTTP routes (/api/database/webhooks)
// and the MCP tools (create-webhook, update-webhook, …) take these, and the tools' argument types
// are inferred from them (test/mcp/schemas.test.ts keeps the two faces equal).
import { type Static, Type } from 'typebox';
import { SLUG_PATTERN } from '../functions/slug.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
const Event = Type.Union([Type.Literal('INSERT'), Type.Literal('UPDATE'), Type.Literal('DELETE')]);

/** A webhook's id, in a path or a tool's arguments. */
export const WebhookId = Type.String({ format: 'uuid', description: 'The webhook id (list-webhooks shows it)' });
/** A delivery's id. */
export const DeliveryId = Type.String({ format: 'uuid' });

/** Every field a webhook is changed with. */
const Fields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  events: Type.Array(Event, { minItems: 1, maxItems: 3, uniqueItems: true }),
  columns: Nullable(
    Type.Array(Type.String({ minLength: 1, maxLength: 63 }), {
      minItems: 1,
      maxItems: 100,
      description: 'UPDATE fires only when one of these changed',
    }),
  ),
  url: Type.String({
    minLength: 1,
    maxLength: 2048,
    description:
      'Target: a public URL receiving a signed POST (Standard Webhooks); OUTBOUND_ALLOW_HOSTS for internal receivers',
  }),
  functionSlug: Type.String({ pattern: SLUG_PATTERN, description: 'Target: a function of this backend' }),
  enabled: Type.Boolean(),
};
const Table = Type.String({ minLength: 1, maxLength: 63, description: 'A table of schema public' });

/** POST /api/database/webhooks, MCP create-webhook: a name, a table, its events and one target. */
export const CreateWebhook = Type.Object(
  {
    name: Fields.name,
    table: Table,
    events: Fields.events,
    columns: Type.Optional(Fields.columns),
    url: Type.Optional(Fields.url),
    functionSlug: Type.Optional(Fields.functionSlug),
    enabled: Type.Optional(Fields.enabled),
  },
  { additionalProperties: false },
);
export type CreateWebhookInput = Static<typeof CreateWebhook>;

/** PATCH /api/database/webhooks/{id}, MCP update-webhook (with the id): only the fields given change. */
export const UpdateWebhook = Type.Partial(Type.Object(Fields), { additionalProperties: false, minProperties: 1 });
export type UpdateWebhookInput = Static<typeof UpdateWebhook>;

/** GET /api/database/webhooks/{id}/deliveries, MCP list-webhook-deliveries: a page, newest first. */
export const DeliveriesPage = {
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
  offset: Type.Integer({ minimum: 0, default: 0 }),
};
