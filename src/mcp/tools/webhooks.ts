import { Type } from 'typebox';
import { tool } from '../types.js';
import { json, table } from '../format.js';
import type { Hook, HookInput } from '../../webhooks/service.js';

const Id = Type.String({ format: 'uuid', description: 'The webhook id (list-webhooks shows it)' });
const Event = Type.Union([Type.Literal('INSERT'), Type.Literal('UPDATE'), Type.Literal('DELETE')]);
const Fields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  events: Type.Array(Event, { minItems: 1, maxItems: 3, uniqueItems: true }),
  columns: Type.Union([Type.Array(Type.String({ minLength: 1, maxLength: 63 }), { minItems: 1, maxItems: 100 }), Type.Null()], { description: 'UPDATE fires only when one of these changed' }),
  url: Type.String({ minLength: 1, maxLength: 2048, description: 'Target: a public URL receiving a signed POST (Standard Webhooks)' }),
  functionSlug: Type.String({ minLength: 1, maxLength: 64, description: 'Target: a function of this backend' }),
  enabled: Type.Boolean(),
};
const Page = { limit: Type.Integer({ minimum: 1, maximum: 200, default: 20 }), offset: Type.Integer({ minimum: 0, default: 0 }) };

const summary = (h: Hook) => ({ id: h.id, name: h.name, table: h.table, events: h.events.join(','), columns: h.columns?.join(',') ?? null, target: h.functionSlug ? `function ${h.functionSlug}` : h.url, enabled: h.enabled });

/** Database webhooks: the webhook service of /api/database/webhooks. */
export const webhookTools = [
  tool<Record<string, never>>({
    name: 'list-webhooks',
    description: 'The database webhooks (id, table, events, target).',
    input: Type.Object({}),
    readOnly: true,
    run: async (_a, ctx) => table((await ctx.services.webhooks.list()).map(summary)),
  }),
  tool<HookInput & { name: string; table: string }>({
    name: 'create-webhook',
    description:
      "Send each INSERT/UPDATE/DELETE of a table to a URL or a function (one target), signed, retried, from a durable outbox. " +
      'Answers the signing secret once: keep it (e.g. set-secret) to verify deliveries.',
    input: Type.Object(
      { name: Fields.name, table: Type.String({ minLength: 1, maxLength: 63, description: 'A table of schema public' }), events: Fields.events, columns: Type.Optional(Fields.columns), url: Type.Optional(Fields.url), functionSlug: Type.Optional(Fields.functionSlug), enabled: Type.Optional(Fields.enabled) },
      { additionalProperties: false },
    ),
    readOnly: false,
    run: async (a, ctx) => {
      const h = await ctx.services.webhooks.create(a);
      return `${json(summary(h))}\nsigning secret (shown this once): ${h.secret}`;
    },
  }),
  tool<HookInput & { id: string }>({
    name: 'update-webhook',
    description: 'Change a webhook: only the fields given (e.g. enabled false to pause it).',
    input: Type.Object(
      { id: Id, name: Type.Optional(Fields.name), events: Type.Optional(Fields.events), columns: Type.Optional(Fields.columns), url: Type.Optional(Fields.url), functionSlug: Type.Optional(Fields.functionSlug), enabled: Type.Optional(Fields.enabled) },
      { additionalProperties: false, minProperties: 2 },
    ),
    readOnly: false,
    run: async ({ id, ...patch }, ctx) => json(summary(await ctx.services.webhooks.update(id, patch))),
  }),
  tool<{ id: string }>({
    name: 'delete-webhook',
    description: 'Delete a webhook and its deliveries.',
    input: Type.Object({ id: Id }),
    readOnly: false,
    destructive: true,
    run: async ({ id }, ctx) => {
      await ctx.services.webhooks.remove(id);
      return `Webhook ${id} deleted`;
    },
  }),
  tool<{ id: string; limit: number; offset: number }>({
    name: 'list-webhook-deliveries',
    description: "A webhook's deliveries, newest first: event, status (pending, succeeded, failed), attempts, the receiver's answer or the error.",
    input: Type.Object({ id: Id, ...Page }),
    readOnly: true,
    run: async ({ id, limit, offset }, ctx) => {
      const ds = await ctx.services.webhooks.deliveries(id, limit, offset);
      return table(ds.map((d) => ({ id: d.id, event: d.event, status: d.status, attempts: d.attempts, responseStatus: d.responseStatus, error: d.error, createdAt: d.createdAt, redeliveryOf: d.redeliveryOf })), { limit, offset });
    },
  }),
  tool<{ id: string; deliveryId: string }>({
    name: 'redeliver-webhook',
    description: 'Send a delivery again (a new delivery of the same event).',
    input: Type.Object({ id: Id, deliveryId: Type.String({ format: 'uuid' }) }),
    readOnly: false,
    run: async ({ id, deliveryId }, ctx) => json(await ctx.services.webhooks.redeliver(id, deliveryId)),
  }),
];
