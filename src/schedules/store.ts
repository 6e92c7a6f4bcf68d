import type { Db, Queryable } from '../db/types.js';

/** A schedule as the API shows it (InsForge's field names, plus Plinth's own targets and policies). */
export interface Schedule {
  id: string;
  name: string;
  cronSchedule: string;
  timezone: string;
  enabled: boolean;
  functionUrl: string | null;
  httpMethod: string;
  headers: Record<string, string>;
  body: unknown;
  functionSlug: string | null;
  sql: string | null;
  timeoutSeconds: number;
  retries: number;
  catchUp: 'one' | 'none';
  nextRunAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface Run {
  id: string;
  scheduleId: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'skipped';
  trigger: 'schedule' | 'catch-up' | 'manual';
  dueAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
  attempts: number;
  output: string | null;
  error: string | null;
}

export const SCHEDULE_COLUMNS = `id, name, cron as "cronSchedule", timezone, enabled, function_url as "functionUrl", http_method as "httpMethod",
  headers, body, function_slug as "functionSlug", sql, timeout_seconds as "timeoutSeconds", retries, catch_up as "catchUp",
  next_due_at as "nextRunAt", created_at as "createdAt", updated_at as "updatedAt"`;

export const RUN_COLUMNS = `id, schedule_id as "scheduleId", status, trigger, due_at as "dueAt", started_at as "startedAt",
  finished_at as "finishedAt", duration_ms as "durationMs", attempts, output, error`;

/** Timestamps as ISO strings, whichever engine answered. */
export function iso<T>(row: T): T {
  const out: Record<string, unknown> = { ...(row as Record<string, unknown>) };
  for (const [k, v] of Object.entries(out)) if (v instanceof Date) out[k] = v.toISOString();
  return out as T;
}

/** The columns a create or update writes, by their database names. */
export type ScheduleRow = Partial<{
  name: string;
  cron: string;
  timezone: string;
  enabled: boolean;
  function_url: string | null;
  http_method: string;
  headers: Record<string, string>;
  body: unknown;
  function_slug: string | null;
  sql: string | null;
  timeout_seconds: number;
  retries: number;
  catch_up: string;
  next_due_at: Date | null;
}>;

const WRITABLE = new Set([
  'name',
  'cron',
  'timezone',
  'enabled',
  'function_url',
  'http_method',
  'headers',
  'body',
  'function_slug',
  'sql',
  'timeout_seconds',
  'retries',
  'catch_up',
  'next_due_at',
]);
const JSON_COLUMNS = new Set(['headers', 'body']);

function values(row: ScheduleRow): { cols: string[]; vals: unknown[] } {
  const cols: string[] = [];
  const vals: unknown[] = [];
  for (const [k, v] of Object.entries(row)) {
    if (v === undefined || !WRITABLE.has(k)) continue;
    cols.push(k);
    vals.push(JSON_COLUMNS.has(k) && v !== null ? JSON.stringify(v) : v);
  }
  return { cols, vals };
}

export class ScheduleStore {
  constructor(private readonly db: Db) {}

  async insert(row: ScheduleRow): Promise<Schedule> {
    const { cols, vals } = values(row);
    const { rows } = await this.db.query<Schedule>(
      `insert into schedules.schedules (${cols.join(', ')}) values (${cols.map((_, i) => `$${i + 1}`).join(', ')}) returning ${SCHEDULE_COLUMNS}`,
      vals,
    );
    return iso(rows[0]!);
  }

  async update(id: string, row: ScheduleRow, tx: Queryable = this.db): Promise<Schedule | null> {
    const { cols, vals } = values(row);
    const sets = cols.map((c, i) => `${c} = $${i + 2}`);
    const { rows } = await tx.query<Schedule>(
      `update schedules.schedules set ${[...sets, 'updated_at = now()'].join(', ')} where id = $1 returning ${SCHEDULE_COLUMNS}`,
      [id, ...vals],
    );
    return rows[0] ? iso(rows[0]) : null;
  }

  async get(id: string, tx: Queryable = this.db, lock = false): Promise<Schedule | null> {
    const { rows } = await tx.query<Schedule>(
      `select ${SCHEDULE_COLUMNS} from schedules.schedules where id = $1${lock ? ' for update' : ''}`,
      [id],
    );
    return rows[0] ? iso(rows[0]) : null;
  }

  async list(): Promise<Schedule[]> {
    const { rows } = await this.db.query<Schedule>(
      `select ${SCHEDULE_COLUMNS} from schedules.schedules order by created_at, id`,
    );
    return rows.map(iso);
  }

  async remove(id: string): Promise<boolean> {
    return (await this.db.query('delete from schedules.schedules where id = $1', [id])).rowCount > 0;
  }

  async runs(id: string, limit: number, offset: number): Promise<Run[]> {
    const { rows } = await this.db.query<Run>(
      `select ${RUN_COLUMNS} from schedules.runs where schedule_id = $1 order by due_at desc, created_at desc limit $2 offset $3`,
      [id, limit, offset],
    );
    return rows.map(iso);
  }

  /** Deletes runs older than `days`, and all but the newest `keep` of each schedule. */
  async prune(days: number, keep: number): Promise<number> {
    const a = await this.db.query(`delete from schedules.runs where created_at < now() - make_interval(days => $1)`, [
      days,
    ]);
    const b = await this.db.query(
      `delete from schedules.runs r using (
         select id from (select id, row_number() over (partition by schedule_id order by created_at desc) as n from schedules.runs) x where n > $1
       ) old where r.id = old.id`,
      [keep],
    );
    return a.rowCount + b.rowCount;
  }

  /** Whether no enabled schedule is due within `ms` (the clock may rest that long). */
  async nothingDueWithin(ms: number): Promise<boolean> {
    const { rows } = await this.db.query<{ idle: boolean }>(
      `select not exists (select 1 from schedules.schedules where enabled and next_due_at <= now() + make_interval(secs => $1)) as idle`,
      [ms / 1000],
    );
    return rows[0]?.idle === true;
  }
}
