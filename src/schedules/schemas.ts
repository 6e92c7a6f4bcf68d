// The input of each schedule operation, declared once: the HTTP routes (/api/schedules) and the
// MCP tools (create-schedule, update-schedule) take these, and the tools' argument types are
// inferred from them (test/mcp/schemas.test.ts keeps the two faces equal).
import { type Static, Type } from 'typebox';
import { SLUG_PATTERN } from '../functions/slug.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

/** Every field a schedule is created or changed with. */
export const ScheduleFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  cronSchedule: Type.String({
    minLength: 1,
    maxLength: 200,
    description: '5 or 6 cron fields, "@hourly"-style names, or "N seconds" (1-59)',
  }),
  timezone: Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone; default UTC' }),
  enabled: Type.Boolean(),
  functionUrl: Nullable(
    Type.String({
      maxLength: 2048,
      description:
        'Target: a public URL (OUTBOUND_ALLOW_HOSTS for internal ones), called with httpMethod, headers and body',
    }),
  ),
  httpMethod: Type.Union(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map((m) => Type.Literal(m))),
  headers: Type.Record(Type.String({ maxLength: 256 }), Type.String({ maxLength: 8192 }), {
    description: 'Values may reference secrets as ${{secrets.NAME}}',
    maxProperties: 50,
  }),
  body: Type.Unknown({ description: 'JSON sent to the function or URL' }),
  functionSlug: Nullable(
    Type.String({ pattern: SLUG_PATTERN, description: 'Target: a function of this backend, called with body' }),
  ),
  sql: Nullable(
    Type.String({ minLength: 1, maxLength: 100_000, description: 'Target: one SQL statement, run as the owner' }),
  ),
  timeoutSeconds: Type.Integer({ minimum: 1, maximum: 3600 }),
  retries: Type.Integer({ minimum: 0, maximum: 10 }),
  catchUp: Type.Union([Type.Literal('one'), Type.Literal('none')], {
    description: 'Runs missed while every instance was down: one catch-up run, or none',
  }),
};

/** POST /api/schedules, MCP create-schedule: a name and a cron expression, the rest optional. */
export const CreateSchedule = Type.Object(
  {
    ...Type.Partial(Type.Object(ScheduleFields)).properties,
    name: ScheduleFields.name,
    cronSchedule: ScheduleFields.cronSchedule,
  },
  { additionalProperties: false },
);
export type CreateScheduleInput = Static<typeof CreateSchedule>;

/** PATCH /api/schedules/{id}, MCP update-schedule (with the id): only the fields given change. */
export const UpdateSchedule = Type.Partial(Type.Object(ScheduleFields), {
  additionalProperties: false,
  minProperties: 1,
});
export type UpdateScheduleInput = Static<typeof UpdateSchedule>;
