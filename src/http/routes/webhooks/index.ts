import { Type } from '@fastify/type-provider-typebox';
import type { RoutePlugin } from '../../types.js';
import { SLUG_PATTERN } from '../../../functions/slug.js';

const tags = ['webhooks'];
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
const Event = Type.Union([Type.Literal('INSERT'), Type.Literal('UPDATE'), Type.Literal('DELETE')]);

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
const Created = Type.Object({ ...Hook.properties, secret: Type.String({ description: "The signing secret (whsec_…), shown this once" }) });
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

const Fields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  table: Type.String({ minLength: 1, maxLength: 63, description: 'A table of schema public' }),
  events: Type.Array(Event, { minItems: 1, maxItems: 3, uniqueItems: true }),
  columns: Nullable(Type.Array(Type.String({ minLength: 1, maxLength: 63 }), { minItems: 1, maxItems: 100, description: 'UPDATE fires only when one of these changed' })),
  url: Type.String({ minLength: 1, maxLength: 2048, description: 'A public URL (OUTBOUND_ALLOW_HOSTS for internal receivers)' }),
  functionSlug: Type.String({ pattern: SLUG_PATTERN }),
  enabled: Type.Boolean(),
};
const Create = Type.Object(
  { name: Fields.name, table: Fields.table, events: Fields.events, columns: Type.Optional(Fields.columns), url: Type.Optional(Fields.url), functionSlug: Type.Optional(Fields.functionSlug), enabled: Type.Optional(Fields.enabled) },
  { additionalProperties: false },
);
const Patch = Type.Object(
  { name: Type.Optional(Fields.name), events: Type.Optional(Fields.events), columns: Type.Optional(Fields.columns), url: Type.Optional(Fields.url), functionSlug: Type.Optional(Fields.functionSlug), enabled: Type.Optional(Fields.enabled) },
  { additionalProperties: false, minProperties: 1 },
);
const Id = Type.Object({ id: Type.String({ format: 'uuid' }) });
const Page = Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })), offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })) });

/** Database webhooks (admin): /api/database/webhooks, their deliveries and redelivery. */
export const webhookRoutes: RoutePlugin = async (app, { deps }) => {
  const w = deps.webhooks;
  const base = '/api/database/webhooks';
  app.get(base, { schema: { tags, summary: 'List webhooks', response: { 200: Type.Array(Hook) } } }, () => w.list());
  app.post(base, { schema: { tags, summary: 'Hook INSERT/UPDATE/DELETE of a table to a URL or a function', body: Create, response: { 201: Created } } }, async (request, reply) =>
    reply.status(201).send(await w.create(request.body)),
  );
  app.get(`${base}/:id`, { schema: { tags, summary: 'One webhook', params: Id, response: { 200: Hook } } }, (request) => w.get(request.params.id));
  app.patch(`${base}/:id`, { schema: { tags, summary: 'Change a webhook', params: Id, body: Patch, response: { 200: Hook } } }, (request) => w.update(request.params.id, request.body));
  app.delete(`${base}/:id`, { schema: { tags, summary: 'Delete a webhook and its deliveries', params: Id, response: { 200: Type.Object({ success: Type.Boolean() }) } } }, async (request) => {
    await w.remove(request.params.id);
    return { success: true };
  });
  app.get(`${base}/:id/deliveries`, { schema: { tags, summary: 'Deliveries, newest first', params: Id, querystring: Page, response: { 200: Type.Array(Delivery) } } }, (request) =>
    w.deliveries(request.params.id, request.query.limit, request.query.offset),
  );
  app.post(
    `${base}/:id/deliveries/:deliveryId/redeliver`,
    { schema: { tags, summary: 'Send a delivery again', params: Type.Object({ id: Type.String({ format: 'uuid' }), deliveryId: Type.String({ format: 'uuid' }) }), response: { 202: Delivery } } },
    async (request, reply) => reply.status(202).send(await w.redeliver(request.params.id, request.params.deliveryId)),
  );
};
