import { type Static, Type } from 'typebox';
import { tool } from '../types.js';
import { json, table } from '../format.js';
import type { Schedule } from '../../schedules/service.js';
import { CreateSchedule, UpdateSchedule } from '../../schedules/schemas.js';

const Id = Type.String({ format: 'uuid', description: 'The schedule id (list-schedules shows it)' });
// The inputs of the HTTP routes (schedules/schemas.ts).
const UpdateInput = Type.Object(
  { id: Id, ...UpdateSchedule.properties },
  { additionalProperties: false, minProperties: 2 },
);

const summary = (s: Schedule) => ({
  id: s.id,
  name: s.name,
  cron: s.cronSchedule,
  timezone: s.timezone,
  enabled: s.enabled,
  target: s.functionSlug ? `function ${s.functionSlug}` : s.sql ? `sql ${s.sql}` : `${s.httpMethod} ${s.functionUrl}`,
  nextRunAt: s.nextRunAt,
});
const Page = {
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 20 }),
  offset: Type.Integer({ minimum: 0, default: 0 }),
};

/** Schedules: cron runs of a function, a URL or SQL, through the schedule service of /api/schedules. */
export const scheduleTools = [
  tool<Record<string, never>>({
    name: 'list-schedules',
    description: 'The schedules (id, name, cron, target, next run).',
    input: Type.Object({}),
    readOnly: true,
    run: async (_a, ctx) => table((await ctx.services.schedules.list()).map(summary)),
  }),
  tool<Static<typeof CreateSchedule>>({
    name: 'create-schedule',
    description:
      'Run something on a cron schedule: exactly one target, a function (functionSlug), a URL (functionUrl) or one SQL statement (sql). ' +
      'E.g. {"name":"nightly","cronSchedule":"0 3 * * *","functionSlug":"cleanup"}. Answers its id and next run; run-schedule runs it now.',
    input: CreateSchedule,
    readOnly: false,
    run: async (a, ctx) => json(summary(await ctx.services.schedules.create(a))),
  }),
  tool<Static<typeof UpdateInput>>({
    name: 'update-schedule',
    description: 'Change a schedule: only the fields given (e.g. enabled false to pause it).',
    input: UpdateInput,
    readOnly: false,
    run: async ({ id, ...patch }, ctx) => json(summary(await ctx.services.schedules.update(id, patch))),
  }),
  tool<{ id: string }>({
    name: 'delete-schedule',
    description: 'Delete a schedule and its runs.',
    input: Type.Object({ id: Id }),
    readOnly: false,
    destructive: true,
    run: async ({ id }, ctx) => {
      await ctx.services.schedules.remove(id);
      return `Schedule ${id} deleted`;
    },
  }),
  tool<{ id: string }>({
    name: 'run-schedule',
    description: 'Run a schedule now (a manual run, queued at once); list-schedule-runs shows how it went.',
    input: Type.Object({ id: Id }),
    readOnly: false,
    run: async ({ id }, ctx) => json(await ctx.services.schedules.runNow(id)),
  }),
  tool<{ id: string; limit: number; offset: number }>({
    name: 'list-schedule-runs',
    description:
      "A schedule's runs, newest first: status (queued, running, succeeded, failed, skipped), trigger, duration, output or error.",
    input: Type.Object({ id: Id, ...Page }),
    readOnly: true,
    run: async ({ id, limit, offset }, ctx) => {
      const runs = await ctx.services.schedules.runs(id, limit, offset);
      return table(
        runs.map((r) => ({
          id: r.id,
          status: r.status,
          trigger: r.trigger,
          dueAt: r.dueAt,
          durationMs: r.durationMs,
          attempts: r.attempts,
          output: r.output,
          error: r.error,
        })),
        { limit, offset },
      );
    },
  }),
];
