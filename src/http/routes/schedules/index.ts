import { Type } from '@fastify/type-provider-typebox';
import type { RoutePlugin } from '../../types.js';
import { CreateSchedule, UpdateSchedule } from '../../../schedules/schemas.js';

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

const Create = CreateSchedule;
const Patch = UpdateSchedule;
const Id = Type.Object({ id: Type.String({ format: 'uuid' }) });
const Page = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
});

/** Schedules (admin): /api/schedules; runs at /runs (and /logs, InsForge's name). */
export const scheduleRoutes: RoutePlugin<'schedules'> = async (app, { deps }) => {
  const s = deps.schedules;
  app.get(
    '/api/schedules',
    { schema: { tags, summary: 'List schedules', response: { 200: Type.Array(Schedule) } } },
    () => s.list(),
  );
  app.post(
    '/api/schedules',
    { schema: { tags, summary: 'Create a schedule', body: Create, response: { 201: Schedule } } },
    async (request, reply) => reply.status(201).send(await s.create(request.body as never)),
  );
  app.get(
    '/api/schedules/:id',
    { schema: { tags, summary: 'One schedule', params: Id, response: { 200: Schedule } } },
    (request) => s.get(request.params.id),
  );
  app.patch(
    '/api/schedules/:id',
    { schema: { tags, summary: 'Change a schedule', params: Id, body: Patch, response: { 200: Schedule } } },
    (request) => s.update(request.params.id, request.body as never),
  );
  app.delete(
    '/api/schedules/:id',
    {
      schema: {
        tags,
        summary: 'Delete a schedule and its runs',
        params: Id,
        response: { 200: Type.Object({ success: Type.Boolean() }) },
      },
    },
    async (request) => {
      await s.remove(request.params.id);
      return { success: true };
    },
  );
  app.post(
    '/api/schedules/:id/run',
    { schema: { tags, summary: 'Run now (a manual run)', params: Id, response: { 202: Run } } },
    async (request, reply) => reply.status(202).send(await s.runNow(request.params.id)),
  );
  for (const path of ['/api/schedules/:id/runs', '/api/schedules/:id/logs']) {
    app.get(
      path,
      {
        schema: {
          tags,
          summary: 'Runs, newest first',
          params: Id,
          querystring: Page,
          response: { 200: Type.Array(Run) },
        },
      },
      (request) => s.runs(request.params.id, request.query.limit, request.query.offset),
    );
  }
};
