import { randomUUID } from 'node:crypto';
import { IDLE_CHECK_MS, IdleGate } from '../lib/idle-gate.js';
import type { Db } from '../db/types.js';
import { AppError } from '../errors/index.js';
import type { Jobs, JobContext } from '../jobs/index.js';
import { refuseUrl } from '../lib/outbound.js';
import { parseCron } from './cron.js';
import { iso, RUN_COLUMNS, ScheduleStore, type Run, type Schedule, type ScheduleRow } from './store.js';
import { errorText, runTarget, type TargetDeps } from './targets.js';
import { tick } from './ticker.js';

export type { Schedule, Run } from './store.js';

const RUN_QUEUE = 'schedule-run';
const RETENTION_QUEUE = 'schedules-retention';

/** What POST /api/schedules and PATCH take (InsForge's names, Plinth's targets and policies). */
export interface ScheduleInput {
  name?: string;
  cronSchedule?: string;
  timezone?: string;
  enabled?: boolean;
  functionUrl?: string | null;
  httpMethod?: string;
  headers?: Record<string, string>;
  body?: unknown;
  functionSlug?: string | null;
  sql?: string | null;
  timeoutSeconds?: number;
  retries?: number;
  catchUp?: 'one' | 'none';
}

export interface ScheduleOptions {
  tickMs: number;
  runRetentionDays: number;
  runsKept: number;
  catchUp: 'one' | 'none';
  log: (level: 'info' | 'warn', msg: string, extra?: Record<string, unknown>) => void;
}

/** Schedules: admin CRUD, the per-instance clock that claims due runs, and the runs themselves (jobs). */
export class ScheduleService {
  private readonly store: ScheduleStore;
  /** Names this instance in the runs it executes (pid: which process ran what). */
  private readonly instance = `${process.pid}-${randomUUID().slice(0, 4)}`;
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<unknown> = Promise.resolve();
  private stopped = false;
  /** Nothing due soon when last looked: the clock rests (lib/idle-gate.ts); a change here wakes it. */
  private readonly gate = new IdleGate(() => this.store.nothingDueWithin(IDLE_CHECK_MS + 1000));

  constructor(
    private readonly db: Db,
    private readonly jobs: Jobs | null,
    private readonly targets: TargetDeps,
    private readonly opts: ScheduleOptions,
  ) {
    this.store = new ScheduleStore(db);
  }

  private need(): Jobs {
    if (!this.jobs) throw new AppError('JOBS_UNAVAILABLE');
    return this.jobs;
  }

  /** Starts this instance's clock and its share of the run workers. */
  async start(): Promise<void> {
    const jobs = this.need();
    await jobs.work<{ runId: string }>(RUN_QUEUE, { concurrency: 8 }, (job) => this.execute(job));
    await jobs.work(RETENTION_QUEUE, { concurrency: 1 }, async () => ({
      pruned: await this.store.prune(this.opts.runRetentionDays, this.opts.runsKept),
    }));
    await jobs.boss.schedule(RETENTION_QUEUE, '*/10 * * * *');
    const loop = () => {
      if (this.stopped) return;
      this.ticking = this.gate
        .due()
        .then((due) => (due ? tick(this.db, (tx, runId, row) => this.enqueue(runId, row, tx)) : 0))
        .catch((err) => this.opts.log('warn', 'schedules: a tick failed', { err: errorText(err) }))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(loop, this.opts.tickMs);
        });
    };
    loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.ticking;
  }

  private async enqueue(
    runId: string,
    row: { timeoutSeconds: number; retries: number },
    tx?: Parameters<Jobs['send']>[3],
  ): Promise<boolean> {
    const jobs = this.need();
    if (await jobs.full()) return false;
    await jobs.send(
      RUN_QUEUE,
      { runId },
      { retryLimit: row.retries, retryDelaySeconds: 2, retryBackoff: true, expireInSeconds: row.timeoutSeconds + 2 },
      tx,
    );
    return true;
  }

  /** One run: marks it running, calls the target within the timeout, records the outcome; a failure throws so the job library retries it. */
  private async execute(job: JobContext<{ runId: string }>): Promise<unknown> {
    const { rows } = await this.db.query<{ schedule_id: string; due_at: Date }>(
      `update schedules.runs set status = 'running', started_at = clock_timestamp(), finished_at = null, attempts = attempts + 1, instance = $2
        where id = $1 and status <> 'succeeded' returning schedule_id, due_at`,
      [job.data.runId, this.instance],
    );
    if (!rows[0]) return null;
    const s = await this.store.get(rows[0].schedule_id);
    if (!s) return null;
    const signal = AbortSignal.any([job.signal, AbortSignal.timeout(s.timeoutSeconds * 1000)]);
    const run = { id: job.data.runId, dueAt: new Date(rows[0].due_at).toISOString() };
    const result = await runTarget(this.targets, s, run, signal).catch((err) => ({
      ok: false,
      output: errorText(err),
    }));
    await this.db.query(
      `update schedules.runs set status = $2, finished_at = clock_timestamp(),
              duration_ms = (extract(epoch from clock_timestamp() - started_at) * 1000)::int, output = $3, error = $4 where id = $1`,
      [
        job.data.runId,
        result.ok ? 'succeeded' : 'failed',
        result.ok ? result.output : null,
        result.ok ? null : result.output,
      ],
    );
    const fields = {
      scheduleId: s.id,
      name: s.name,
      runId: job.data.runId,
      dueAt: run.dueAt,
      attempt: job.retryCount + 1,
    };
    if (!result.ok) {
      this.opts.log('warn', 'schedules: a run failed', { ...fields, error: result.output.slice(0, 200) });
      throw new Error(result.output);
    }
    this.opts.log('info', 'schedules: a run succeeded', fields);
    return { runId: job.data.runId };
  }

  /** Checks an input as a whole (the create, or the stored schedule with a patch applied) and answers its columns. */
  private async validate(input: ScheduleInput, current: Schedule | null): Promise<ScheduleRow> {
    const merged = { ...current, ...input } as ScheduleInput & Partial<Schedule>;
    const cron = parseCron(merged.cronSchedule ?? '', merged.timezone ?? 'UTC');
    const targets = [merged.functionUrl, merged.functionSlug, merged.sql].filter((t) => t !== null && t !== undefined);
    if (targets.length !== 1) {
      throw new AppError('INVALID_INPUT', {
        message: 'A schedule has exactly one target: functionUrl (an HTTP request), functionSlug or sql.',
      });
    }
    if (merged.functionUrl) {
      const refused = refuseUrl(merged.functionUrl, this.targets.policy);
      if (refused) throw new AppError('OUTBOUND_NOT_ALLOWED', { message: `The URL ${refused}.` });
    }
    if (merged.functionSlug) {
      const found = await this.db.query('select 1 from functions.functions where slug = $1', [merged.functionSlug]);
      if (!found.rows.length)
        throw new AppError('FUNCTION_NOT_FOUND', { message: `No function with slug "${merged.functionSlug}".` });
    }
    const enabled = merged.enabled ?? true;
    const timing =
      input.cronSchedule !== undefined || input.timezone !== undefined || input.enabled !== undefined || !current;
    return {
      name: input.name,
      cron: input.cronSchedule,
      timezone: input.timezone,
      enabled: input.enabled,
      function_url: input.functionUrl,
      http_method: input.httpMethod?.toUpperCase(),
      headers: input.headers,
      body: input.body,
      function_slug: input.functionSlug,
      sql: input.sql,
      timeout_seconds: input.timeoutSeconds,
      retries: input.retries,
      catch_up: input.catchUp ?? (current ? undefined : this.opts.catchUp),
      // A new, changed or re-enabled schedule starts from now: no catch-up for the time it was off.
      next_due_at: timing ? (enabled ? cron.next(new Date()) : null) : undefined,
    };
  }

  async create(input: ScheduleInput): Promise<Schedule> {
    this.need();
    const schedule = await this.store.insert(await this.validate(input, null));
    this.gate.wake();
    return schedule;
  }

  async update(id: string, patch: ScheduleInput): Promise<Schedule> {
    const current = await this.get(id);
    // Clearing the other targets when one is set: a PATCH to sql replaces a URL target.
    const clear: ScheduleInput = {};
    if (patch.functionUrl) Object.assign(clear, { functionSlug: null, sql: null });
    if (patch.functionSlug) Object.assign(clear, { functionUrl: null, sql: null });
    if (patch.sql) Object.assign(clear, { functionUrl: null, functionSlug: null });
    const row = await this.validate({ ...clear, ...patch }, current);
    const schedule = (await this.store.update(id, row)) ?? this.notFound(id);
    this.gate.wake();
    return schedule;
  }

  async get(id: string): Promise<Schedule> {
    return (await this.store.get(id)) ?? this.notFound(id);
  }

  list(): Promise<Schedule[]> {
    return this.store.list();
  }

  async remove(id: string): Promise<void> {
    if (!(await this.store.remove(id))) this.notFound(id);
  }

  /** Runs the schedule now, whatever its clock says (a "manual" run); answers the queued run. */
  async runNow(id: string): Promise<Run> {
    const s = await this.get(id);
    return this.db.transaction(async (tx) => {
      const { rows } = await tx.query<{ id: string }>(
        `insert into schedules.runs (schedule_id, due_at, trigger, status) values ($1, clock_timestamp(), 'manual', 'queued') returning id`,
        [s.id],
      );
      if (!(await this.enqueue(rows[0]!.id, s, tx))) throw new AppError('QUEUE_FULL');
      const run = await tx.query<Run>(`select ${RUN_COLUMNS} from schedules.runs where id = $1`, [rows[0]!.id]);
      return iso(run.rows[0]!);
    });
  }

  async runs(id: string, limit = 50, offset = 0): Promise<Run[]> {
    await this.get(id);
    return this.store.runs(id, limit, offset);
  }

  private notFound(id: string): never {
    throw new AppError('SCHEDULE_NOT_FOUND', { message: `No schedule with id "${id}".` });
  }
}
