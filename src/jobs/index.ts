import PgBoss from 'pg-boss';
import type { Db, Queryable } from '../db/types.js';
import { AppError } from '../errors/index.js';

/** Where jobs live: pg-boss's own schema in the app's database. */
const SCHEMA = 'pgboss';
/** Held while pg-boss installs its schema or makes a queue (see `exclusively`). */
const INSTALL_LOCK = 7134;
/** Every instance LISTENs here; a send notifies it in the sender's transaction, so pickup is immediate. */
const WAKE_CHANNEL = 'plinth_jobs';
/**
 * A worker that has run nothing for IDLE_AFTER_MS (or since it started) asks less often, doubling its wait up to
 * IDLE_POLL_MAX_MS: what arrives without a wake-up (a cron tick of the job library, a job handed
 * back after its instance died) waits at most that long. Within IDLE_AFTER_MS of a job (whose
 * retries follow within seconds) it asks every `pollMs`.
 */
const IDLE_AFTER_MS = 30_000;
const IDLE_POLL_MAX_MS = 5000;
/** The poll interval is cut in this many points at which the queues' workers first ask (see `work`). */
const STAGGER_SLOTS = 8;

export interface JobsOptions {
  /** How often an idle worker asks for jobs when no wake-up came (pg-boss's floor is 500 ms). */
  pollMs?: number;
  /** How often expired jobs (their instance died) are handed back: the take-over time after a kill. */
  maintenanceSeconds?: number;
  /** Most jobs waiting across queues before `full()` says so (JOBS_MAX_QUEUED). */
  maxQueued?: number;
  warn?: (msg: string, extra?: Record<string, unknown>) => void;
}

export interface SendOptions {
  /** Attempts after the first; 0: none. */
  retryLimit?: number;
  retryDelaySeconds?: number;
  /** Doubles the delay at each retry (pg-boss's back-off, with jitter). */
  retryBackoff?: boolean;
  /** An active job older than this is failed (or retried) by whichever instance maintains. */
  expireInSeconds?: number;
  startAfterSeconds?: number;
}

export interface JobContext<T> {
  id: string;
  data: T;
  /** 0 on the first attempt. */
  retryCount: number;
  /** Aborts when the job's time is up. */
  signal: AbortSignal;
}

/** What a handler returns is the job's output; what it throws fails it (and retries by its policy). */
export type JobHandler<T> = (job: JobContext<T>) => Promise<unknown>;

/** pg-boss's database adapter over the app's Db; pg-boss reads raw pg errors (codes and messages). */
function adapter(q: Queryable) {
  return {
    async executeSql(text: string, values?: unknown[]) {
      try {
        return await q.query(text, values ?? []);
      } catch (err) {
        throw err instanceof AppError && err.cause ? err.cause : err;
      }
    },
  };
}

interface Worker {
  name: string;
  wake: () => void;
  stop: () => Promise<void>;
}

/**
 * The job library (pg-boss on the app's Postgres) behind start, stop, send and work. Jobs are
 * claimed with SKIP LOCKED, expire when their instance dies and are then retried or failed by
 * any other instance, so N instances share the work with no leader.
 */
export class Jobs {
  readonly boss: PgBoss;
  private readonly workers: Worker[] = [];
  private unlisten: (() => Promise<void>) | null = null;
  /** The queues known to exist (read once at start, then each made here): `queue` asks no more for them. */
  private readonly queues = new Set<string>();
  private readonly pollMs: number;
  private stopped = false;
  private queued = 0;
  private countedAt = 0;
  readonly maxQueued: number;

  constructor(
    private readonly db: Db,
    private readonly opts: JobsOptions = {},
  ) {
    this.pollMs = Math.max(500, opts.pollMs ?? 1000);
    this.maxQueued = opts.maxQueued ?? 100_000;
    this.boss = new PgBoss({
      db: adapter(db),
      schema: SCHEMA,
      migrate: true,
      supervise: true,
      schedule: true,
      maintenanceIntervalSeconds: opts.maintenanceSeconds ?? 2,
      // Completed and failed jobs are archived after a day and deleted after a week: bounded.
      archiveCompletedAfterSeconds: 3600,
      archiveFailedAfterSeconds: 86_400,
      deleteAfterDays: 7,
    } as never);
    this.boss.on('error', (err: unknown) =>
      this.opts.warn?.('jobs: the job library reported an error', { err: String((err as Error)?.message ?? err) }),
    );
  }

  async start(): Promise<void> {
    await this.exclusively(() => this.boss.start());
    // One read for every queue, instead of one each as the areas start side by side (each on a
    // pool connection of its own: docs/benchmarks.md, branch start40). Queues are never dropped.
    const { rows } = await this.db.query<{ name: string }>(`select name from ${SCHEMA}.queue`);
    for (const r of rows) this.queues.add(r.name);
    this.unlisten = await this.db.listen(WAKE_CHANNEL, (name) => {
      for (const w of this.workers) if (w.name === name) w.wake();
    });
  }

  /** Makes a queue (idempotent); `send` needs it. */
  async queue(name: string): Promise<void> {
    if (this.queues.has(name)) return;
    if (!(await this.boss.getQueue(name)))
      await this.exclusively(async () => {
        if (!(await this.boss.getQueue(name))) await this.boss.createQueue(name);
      });
    this.queues.add(name);
  }

  /**
   * Runs pg-boss's schema install or a queue's creation while no other instance does: done by
   * two instances at once on a fresh database, the install fails on the schema it sees missing
   * ("pg_namespace_nspname_index") and create_queue deadlocks. Held in a transaction of its own
   * (an advisory lock) while pg-boss works on its other connections.
   */
  private exclusively<T>(fn: () => Promise<T>): Promise<T> {
    return this.db.transaction(async (tx) => {
      await tx.query('select pg_advisory_xact_lock($1)', [INSTALL_LOCK]);
      return fn();
    });
  }

  /** Enqueues a job; in `tx` (the caller's transaction) when given, so it exists only if that commits. */
  async send<T extends object>(name: string, data: T, opts: SendOptions = {}, tx?: Queryable): Promise<string> {
    const q = tx ?? this.db;
    const id = await this.boss.send(name, data, {
      retryLimit: opts.retryLimit ?? 0,
      retryDelay: opts.retryDelaySeconds ?? 1,
      retryBackoff: opts.retryBackoff ?? false,
      expireInSeconds: Math.max(1, Math.ceil(opts.expireInSeconds ?? 900)),
      ...(opts.startAfterSeconds ? { startAfter: Math.ceil(opts.startAfterSeconds) } : {}),
      db: adapter(q),
    } as never);
    await q.query('select pg_notify($1, $2)', [WAKE_CHANNEL, name]);
    return id as string;
  }

  /** Enqueues many jobs of one queue in one statement (in `tx` when given), with one policy. */
  async sendMany<T extends object>(name: string, data: T[], opts: SendOptions = {}, tx?: Queryable): Promise<void> {
    if (!data.length) return;
    const q = tx ?? this.db;
    const policy = {
      retryLimit: opts.retryLimit ?? 0,
      retryDelay: opts.retryDelaySeconds ?? 1,
      retryBackoff: opts.retryBackoff ?? false,
      expireInSeconds: Math.max(1, Math.ceil(opts.expireInSeconds ?? 900)),
    };
    await this.boss.insert(
      data.map((d) => ({ name, data: d, ...policy })),
      { db: adapter(q) } as never,
    );
    await q.query('select pg_notify($1, $2)', [WAKE_CHANNEL, name]);
  }

  /**
   * Runs `handler` on a cron (pg-boss's schedule: stored in the database, so it survives
   * restarts, and one instance's clock enqueues each tick once for all instances); the job is
   * worked one at a time, by whichever instance takes it.
   */
  async every(
    name: string,
    cron: string,
    handler: JobHandler<Record<string, never>>,
    opts: { expireInSeconds?: number } = {},
  ): Promise<void> {
    await this.work(name, { concurrency: 1 }, handler);
    await this.boss.schedule(name, cron, {}, {
      tz: 'UTC',
      retryLimit: 0,
      expireInSeconds: opts.expireInSeconds ?? 300,
      singletonKey: name,
    } as never);
  }

  /**
   * Runs `handler` for jobs of `name`, up to `concurrency` at a time on this instance. Each job
   * is completed or failed on its own; the loop asks again at once while there is work, and
   * waits for a wake-up (or the poll interval) when there is none.
   */
  async work<T>(name: string, opts: { concurrency: number }, handler: JobHandler<T>): Promise<void> {
    await this.queue(name);
    // A wake-up that comes while the loop is fetching (no one waits yet) is kept for its next
    // wait, not lost: otherwise a job sent meanwhile waited for the poll interval.
    let woken = false;
    const keep = () => {
      woken = true;
    };
    let wake: () => void = keep;
    let running = true;
    let emptyRounds = 0;
    let lastJobAt = 0;
    const active = new Set<Promise<void>>();
    const runOne = async (job: PgBoss.JobWithMetadata<T>) => {
      const signal = AbortSignal.timeout(job.expireInSeconds * 1000);
      try {
        const output = await handler({ id: job.id, data: job.data, retryCount: job.retryCount, signal });
        await this.boss.complete(name, job.id, (output ?? undefined) as object | undefined);
      } catch (err) {
        await this.boss
          .fail(name, job.id, { message: String((err as Error)?.message ?? err).slice(0, 1000) })
          .catch(() => {});
      }
    };
    /** Waits `ms`, or less when a wake-up for this queue comes (one that came meanwhile ends it at once). */
    const pause = (ms: number) =>
      woken
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            const timer = setTimeout(() => {
              wake = keep;
              resolve();
            }, ms);
            wake = () => {
              clearTimeout(timer);
              wake = keep;
              resolve();
            };
          });
    // The queues' workers start together: each asks first at its own point of the poll interval,
    // so their asks never coincide and take one pool connection, not one each (8 at once held 8
    // connections, idle backends kept for 10 s after a start: docs/benchmarks.md, branch start40).
    const offsetMs = Math.round(((this.workers.length % STAGGER_SLOTS) * this.pollMs) / STAGGER_SLOTS);
    const loop = async () => {
      if (offsetMs) await pause(offsetMs);
      while (running && !this.stopped) {
        woken = false;
        const room = opts.concurrency - active.size;
        const jobs =
          room > 0
            ? ((await this.boss
                .fetch<T>(name, { batchSize: room, includeMetadata: true })
                .catch(() => [])) as PgBoss.JobWithMetadata<T>[])
            : [];
        for (const job of jobs) {
          const p = runOne(job).finally(() => {
            active.delete(p);
            wake();
          });
          active.add(p);
        }
        if (jobs.length && jobs.length === room) continue;
        if (jobs.length || active.size) lastJobAt = Date.now();
        emptyRounds = Date.now() - lastJobAt < IDLE_AFTER_MS ? 0 : emptyRounds + 1;
        if (woken) continue;
        await pause(Math.min(this.pollMs * 2 ** emptyRounds, IDLE_POLL_MAX_MS));
      }
    };
    const done = loop();
    this.workers.push({
      name,
      wake: () => wake(),
      stop: async () => {
        running = false;
        wake();
        await done;
        await Promise.allSettled([...active]);
      },
    });
  }

  /** Jobs waiting or running per queue (for health and bounds). */
  async depth(): Promise<Record<string, { queued: number; active: number }>> {
    const { rows } = await this.db.query<{ name: string; queued: number; active: number }>(
      `select name, count(*) filter (where state in ('created', 'retry'))::int as queued, count(*) filter (where state = 'active')::int as active
         from ${SCHEMA}.job where state < 'completed' group by name`,
    );
    return Object.fromEntries(rows.map((r) => [r.name, { queued: r.queued, active: r.active }]));
  }

  /**
   * Whether the jobs waiting (not running) reach `maxQueued`: then producers refuse or skip
   * instead of piling up. Counted at most every 2 s (a cached answer in between).
   */
  async full(): Promise<boolean> {
    if (Date.now() - this.countedAt > 2000) {
      this.countedAt = Date.now();
      const { rows } = await this.db.query<{ n: number }>(
        `select count(*)::int as n from ${SCHEMA}.job where state in ('created', 'retry')`,
      );
      this.queued = rows[0]?.n ?? 0;
    }
    return this.queued >= this.maxQueued;
  }

  /**
   * Stops this instance's workers. `graceful`: running jobs finish first; otherwise they are
   * left active, as after a kill, and another instance takes them once they expire.
   */
  async stop(opts: { graceful?: boolean } = {}): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.unlisten?.().catch(() => {});
    if (opts.graceful !== false) await Promise.all(this.workers.map((w) => w.stop()));
    else for (const w of this.workers) w.wake();
    await this.boss.stop({ graceful: false, close: false, wait: true } as never).catch(() => {});
  }
}
