import { Type } from '@fastify/type-provider-typebox';
import type { RoutePlugin } from '../../types.js';
import { CreateWebhook, DeliveriesPage, DeliveryId, UpdateWebhook, WebhookId } from '../../../webhooks/schemas.js';

const tags = ['webhooks'];
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

const Hook = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  table: Type.String(),
  events: Type.Array(Type.String()),
  columns: Nullable(Type.Array(Type.String())),
  url: Nullable(Type.String()),
  functionSlug: Nullable(Type.String()),
  enabled: Type.Boolean(),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});
const Created = Type.Object({
  ...Hook.properties,
  secret: Type.String({ description: 'The signing secret (whsec_…), shown this once' }),
});
const Delivery = Type.Object({
  id: Type.String(),
  hookId: Type.String(),
  event: Type.String(),
  status: Type.String({ description: 'pending, succeeded or failed' }),
  attempts: Type.Integer(),
  responseStatus: Nullable(Type.Integer()),
  responseBody: Nullable(Type.String()),
  error: Nullable(Type.String()),
  redeliveryOf: Nullable(Type.String()),
  createdAt: Type.String({ format: 'date-time' }),
  deliveredAt: Nullable(Type.String({ format: 'date-time' })),
});

const Id = Type.Object({ id: WebhookId });
const Page = Type.Partial(Type.Object(DeliveriesPage));

/** Database webhooks (admin): /api/database/webhooks, their deliveries and redelivery. */
export const webhookRoutes: RoutePlugin<'webhooks'> = async (app, { deps }) => {
  const w = deps.webhooks;
  const base = '/api/database/webhooks';
  app.get(base, { schema: { tags, summary: 'List webhooks', response: { 200: Type.Array(Hook) } } }, () => w.list());
  app.post(
    base,
    {
      schema: {
        tags,
        summary: 'Hook INSERT/UPDATE/DELETE of a table to a URL or a function',
        body: CreateWebhook,
        response: { 201: Created },
      },
    },
    async (request, reply) => reply.status(201).send(await w.create(request.body)),
  );
  app.get(`${base}/:id`, { schema: { tags, summary: 'One webhook', params: Id, response: { 200: Hook } } }, (request) =>
    w.get(request.params.id),
  );
  app.patch(
    `${base}/:id`,
    { schema: { tags, summary: 'Change a webhook', params: Id, body: UpdateWebhook, response: { 200: Hook } } },
    (request) => w.update(request.params.id, request.body),
  );
  app.delete(
    `${base}/:id`,
    {
      schema: {
        tags,
        summary: 'Delete a webhook and its deliveries',
        params: Id,
        response: { 200: Type.Object({ success: Type.Boolean() }) },
      },
    },
    async (request) => {
      await w.remove(request.params.id);
      return { success: true };
    },
  );
  app.get(
    `${base}/:id/deliveries`,
    {
      schema: {
        tags,
        summary: 'Deliveries, newest first',
        params: Id,
        querystring: Page,
        response: { 200: Type.Array(Delivery) },
      },
    },
    (request) => w.deliveries(request.params.id, request.query.limit, request.query.offset),
  );
  app.post(
    `${base}/:id/deliveries/:deliveryId/redeliver`,
    {
      schema: {
        tags,
        summary: 'Send a delivery again',
        params: Type.Object({ id: WebhookId, deliveryId: DeliveryId }),
        response: { 202: Delivery },
      },
    },
    async (request, reply) => reply.status(202).send(await w.redeliver(request.params.id, request.params.deliveryId)),
  );
};
