import { Type } from '@fastify/type-provider-typebox';
import type { RoutePlugin } from '../../types.js';
import { SLUG_PATTERN } from '../../../functions/slug.js';

const tags = ['schedules'];
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

const Schedule = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  cronSchedule: Type.String(),
  timezone: Type.String(),
  enabled: Type.Boolean(),
  functionUrl: Nullable(Type.String()),
  httpMethod: Type.String(),
  headers: Type.Record(Type.String(), Type.String()),
  body: Type.Unknown(),
  functionSlug: Nullable(Type.String()),
  sql: Nullable(Type.String()),
  timeoutSeconds: Type.Integer(),
  retries: Type.Integer(),
  catchUp: Type.String(),
  nextRunAt: Nullable(Type.String({ format: 'date-time' })),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});

const Run = Type.Object({
  id: Type.String(),
  scheduleId: Type.String(),
  status: Type.String({ description: 'queued, running, succeeded, failed or skipped' }),
  trigger: Type.String({ description: 'schedule, catch-up or manual' }),
  dueAt: Type.String({ format: 'date-time' }),
  startedAt: Nullable(Type.String({ format: 'date-time' })),
  finishedAt: Nullable(Type.String({ format: 'date-time' })),
  durationMs: Nullable(Type.Integer()),
  attempts: Type.Integer(),
  output: Nullable(Type.String()),
  error: Nullable(Type.String()),
});

const Fields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  cronSchedule: Type.String({ minLength: 1, maxLength: 200, description: '5 or 6 fields, "@hourly"-style names, or "N seconds" (1-59)' }),
  timezone: Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone; default UTC' }),
  enabled: Type.Boolean(),
  functionUrl: Nullable(Type.String({ maxLength: 2048, description: 'An HTTP target: a public URL (OUTBOUND_ALLOW_HOSTS for internal ones)' })),
  httpMethod: Type.Union(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map((m) => Type.Literal(m))),
  headers: Type.Record(Type.String({ maxLength: 256 }), Type.String({ maxLength: 8192 }), { description: 'Values may reference secrets as ${{secrets.NAME}}', maxProperties: 50 }),
  body: Type.Unknown(),
  functionSlug: Nullable(Type.String({ pattern: SLUG_PATTERN })),
  sql: Nullable(Type.String({ minLength: 1, maxLength: 100_000, description: 'One statement, run as the owner' })),
  timeoutSeconds: Type.Integer({ minimum: 1, maximum: 3600 }),
  retries: Type.Integer({ minimum: 0, maximum: 10 }),
  catchUp: Type.Union([Type.Literal('one'), Type.Literal('none')], { description: 'Runs missed while every instance was down: one catch-up run, or none' }),
};
const Create = Type.Object(
  { ...Object.fromEntries(Object.entries(Fields).map(([k, v]) => [k, Type.Optional(v)])), name: Fields.name, cronSchedule: Fields.cronSchedule },
  { additionalProperties: false },
);
const Patch = Type.Partial(Type.Object(Fields), { additionalProperties: false, minProperties: 1 });
const Id = Type.Object({ id: Type.String({ format: 'uuid' }) });
const Page = Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })), offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })) });

/** Schedules (admin): /api/schedules; runs at /runs (and /logs, InsForge's name). */
export const scheduleRoutes: RoutePlugin = async (app, { deps }) => {
  const s = deps.schedules;
  app.get('/api/schedules', { schema: { tags, summary: 'List schedules', response: { 200: Type.Array(Schedule) } } }, () => s.list());
  app.post('/api/schedules', { schema: { tags, summary: 'Create a schedule', body: Create, response: { 201: Schedule } } }, async (request, reply) =>
    reply.status(201).send(await s.create(request.body as never)),
  );
  app.get('/api/schedules/:id', { schema: { tags, summary: 'One schedule', params: Id, response: { 200: Schedule } } }, (request) => s.get(request.params.id));
  app.patch('/api/schedules/:id', { schema: { tags, summary: 'Change a schedule', params: Id, body: Patch, response: { 200: Schedule } } }, (request) =>
    s.update(request.params.id, request.body as never),
  );
  app.delete('/api/schedules/:id', { schema: { tags, summary: 'Delete a schedule and its runs', params: Id, response: { 200: Type.Object({ success: Type.Boolean() }) } } }, async (request) => {
    await s.remove(request.params.id);
    return { success: true };
  });
  app.post('/api/schedules/:id/run', { schema: { tags, summary: 'Run now (a manual run)', params: Id, response: { 202: Run } } }, async (request, reply) =>
    reply.status(202).send(await s.runNow(request.params.id)),
  );
  for (const path of ['/api/schedules/:id/runs', '/api/schedules/:id/logs']) {
    app.get(path, { schema: { tags, summary: 'Runs, newest first', params: Id, querystring: Page, response: { 200: Type.Array(Run) } } }, (request) =>
      s.runs(request.params.id, request.query.limit, request.query.offset),
    );
  }
};
