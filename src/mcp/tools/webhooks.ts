import { type Static, Type } from 'typebox';
import { tool } from '../types.js';
import { json, table } from '../format.js';
import type { Hook } from '../../webhooks/service.js';
import { CreateWebhook, DeliveriesPage, DeliveryId, UpdateWebhook, WebhookId } from '../../webhooks/schemas.js';

const Id = WebhookId;
// The inputs of the HTTP routes (webhooks/schemas.ts); the update also names the webhook.
const UpdateInput = Type.Object(
  { id: Id, ...UpdateWebhook.properties },
  { additionalProperties: false, minProperties: 2 },
);
const DeliveriesInput = Type.Object({ id: Id, ...DeliveriesPage });

const summary = (h: Hook) => ({
  id: h.id,
  name: h.name,
  table: h.table,
  events: h.events.join(','),
  columns: h.columns?.join(',') ?? null,
  target: h.functionSlug ? `function ${h.functionSlug}` : h.url,
  enabled: h.enabled,
});

/** Database webhooks: the webhook service of /api/database/webhooks. */
export const webhookTools = [
  tool<Record<string, never>>({
    name: 'list-webhooks',
    description: 'The database webhooks (id, table, events, target).',
    input: Type.Object({}),
    readOnly: true,
    run: async (_a, ctx) => table((await ctx.services.webhooks.list()).map(summary)),
  }),
  tool<Static<typeof CreateWebhook>>({
    name: 'create-webhook',
    description:
      'Send each INSERT/UPDATE/DELETE of a table to a URL or a function (one target), signed, retried, from a durable outbox. ' +
      'Answers the signing secret once: keep it (e.g. set-secret) to verify deliveries.',
    input: CreateWebhook,
    readOnly: false,
    run: async (a, ctx) => {
      const h = await ctx.services.webhooks.create(a);
      return `${json(summary(h))}\nsigning secret (shown this once): ${h.secret}`;
    },
  }),
  tool<Static<typeof UpdateInput>>({
    name: 'update-webhook',
    description: 'Change a webhook: only the fields given (e.g. enabled false to pause it).',
    input: UpdateInput,
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
  tool<Static<typeof DeliveriesInput>>({
    name: 'list-webhook-deliveries',
    description:
      "A webhook's deliveries, newest first: event, status (pending, succeeded, failed), attempts, the receiver's answer or the error.",
    input: DeliveriesInput,
    readOnly: true,
    run: async ({ id, limit, offset }, ctx) => {
      const ds = await ctx.services.webhooks.deliveries(id, limit, offset);
      return table(
        ds.map((d) => ({
          id: d.id,
          event: d.event,
          status: d.status,
          attempts: d.attempts,
          responseStatus: d.responseStatus,
          error: d.error,
          createdAt: d.createdAt,
          redeliveryOf: d.redeliveryOf,
        })),
        { limit, offset },
      );
    },
  }),
  tool<{ id: string; deliveryId: string }>({
    name: 'redeliver-webhook',
    description: 'Send a delivery again (a new delivery of the same event).',
    input: Type.Object({ id: Id, deliveryId: DeliveryId }),
    readOnly: false,
    run: async ({ id, deliveryId }, ctx) => json(await ctx.services.webhooks.redeliver(id, deliveryId)),
  }),
];
