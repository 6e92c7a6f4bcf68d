// The job queue and the areas that run on it (schedules, database webhooks, email) and the
// housekeeping (log retention, usage samples), composed for the composition root (deps.ts):
// started, their health and metrics hooked, their lines written to the log store under the
// sources `schedules`, `webhooks`, `email` and `jobs`.
import type { Redis } from 'ioredis';
import type { Config } from './config/index.js';
import type { Db } from './db/types.js';
import type { Lifecycle } from './lib/lifecycle.js';
import type { FunctionService } from './functions/index.js';
import type { Mailer } from './auth/mailer.js';
import type { LogsService } from './logs/index.js';
import type { Metrics } from './metrics/index.js';
import { FallbackCounter, MemoryCounter, RedisCounter } from './lib/counter.js';
import { Jobs } from './jobs/index.js';
import { type LineSink, processLog } from './lib/process-log.js';
import { UsageHistory } from './metrics/history.js';
import { ScheduleService } from './schedules/service.js';
import { WebhookService } from './webhooks/service.js';
import { EmailService } from './email/service.js';
import { TemplateStore } from './email/templates.js';
import { guardedDispatcher, OutboundPolicy } from './lib/outbound.js';

/** The job queue and the areas built on it (schedules), started, and the housekeeping; their health shows queue depth and bounds. */
export async function startAutomation(
  config: Readonly<Config>,
  db: Db,
  areas: {
    functions: FunctionService;
    email: EmailService;
    logs: LogsService;
    metrics: Metrics;
    ownerDb: Db;
    /** Writes the AI gateway's pending usage rows (a usage sample counts them). */
    flushAiUsage: () => Promise<void>;
    /** The process's stdout (main.ts's non-blocking destination), for lines an operator must see. */
    stdout?: LineSink;
  },
  life: Lifecycle,
) {
  const { functions, email, logs } = areas;
  const log =
    (source: string) =>
    (level: 'info' | 'warn', msg: string, extra: Record<string, unknown> = {}) =>
      logs.write(source, level, msg, extra);
  const a = config.automation;
  const outbound = new OutboundPolicy(a.outboundAllowHosts);
  const dispatcher = guardedDispatcher(outbound, { timeoutMs: a.webhooks.timeoutMs });
  life.onClose(() => dispatcher.close());
  // pg-boss needs a server (SKIP LOCKED across connections, scripts): PGlite runs without jobs.
  const jobs =
    db.kind === 'postgres'
      ? new Jobs(db, { maxQueued: a.jobsMaxQueued, warn: (msg, extra) => logs.write('jobs', 'warn', msg, extra) })
      : null;
  if (jobs) {
    await jobs.start();
    life.onClose(() => jobs.stop());
    life.health('jobs', {
      required: false,
      run: async () => {
        const depth = await jobs.depth();
        const sum = (k: 'queued' | 'active') => Object.values(depth).reduce((n, d) => n + d[k], 0);
        const outbox = await db.query<{ n: number }>('select count(*)::int as n from webhooks.outbox');
        return { info: { queued: sum('queued'), active: sum('active'), webhookOutbox: outbox.rows[0]?.n ?? 0 } };
      },
      info: {
        maxQueued: String(a.jobsMaxQueued),
        scheduleRunRetentionDays: String(a.schedules.runRetentionDays),
        scheduleRunsKept: String(a.schedules.runsKept),
        webhookDeliveryRetentionDays: String(a.webhooks.deliveryRetentionDays),
      },
    });
    areas.metrics.setJobQueueDepth(async () =>
      Object.fromEntries(Object.entries(await jobs.depth()).map(([queue, d]) => [queue, d.queued])),
    );
  }
  const schedules = new ScheduleService(
    db,
    jobs,
    { db, ownerDb: areas.ownerDb, functions, policy: outbound, dispatcher, publicUrl: config.publicUrl },
    { ...a.schedules, log: log('schedules') },
  );
  const webhooks = new WebhookService(
    { db, jobs, functions, policy: outbound, dispatcher, publicUrl: config.publicUrl },
    { ...a.webhooks, log: log('webhooks') },
  );
  const housekeeping = { db, logs, flushAiUsage: areas.flushAiUsage };
  const usageHistory = jobs
    ? await startOnJobs(config, jobs, { schedules, webhooks, email, logs, stdout: areas.stdout, housekeeping }, life)
    : await startHousekeeping(config, null, housekeeping, life);
  return { jobs, schedules, webhooks, outbound, usageHistory };
}

/**
 * The areas on the job queue started side by side: each makes its queues and workers, a few
 * round trips to Postgres each (queues made by several at once take turns: Jobs.queue holds a
 * lock while it makes one). Their stops are registered first, so a failed start stops them all.
 */
async function startOnJobs(
  config: Readonly<Config>,
  jobs: Jobs,
  areas: {
    schedules: ScheduleService;
    webhooks: WebhookService;
    email: EmailService;
    logs: LogsService;
    stdout?: LineSink;
    housekeeping: Parameters<typeof startHousekeeping>[2];
  },
  life: Lifecycle,
): Promise<UsageHistory> {
  const { schedules, webhooks, logs } = areas;
  life.onClose(() => schedules.stop());
  life.onClose(() => webhooks.stop());
  // Every line of the mail queue goes to the log store; a mail given up on (error) also to
  // stdout, where an operator at LOG_LEVEL=warn sees it.
  const out = processLog(config.logLevel, areas.stdout);
  const mail = (level: 'info' | 'warn' | 'error', msg: string, fields: Record<string, unknown>) => {
    logs.write('email', level, msg, fields);
    if (level === 'error') out(level, msg, fields);
  };
  const [usageHistory] = await Promise.all([
    startHousekeeping(config, jobs, areas.housekeeping, life),
    schedules.start(),
    webhooks.start(),
    areas.email.start(jobs, mail),
  ]);
  return usageHistory;
}

/** The email API over the mailer, with per-caller counters shared through Redis when there is one. */
export function buildEmail(config: Readonly<Config>, db: Db, mailer: Mailer, redis: Redis | null): EmailService {
  const counter = redis
    ? new FallbackCounter(new RedisCounter(redis, 'plinth-email:'), new MemoryCounter())
    : new MemoryCounter();
  return new EmailService({ db, mailer, counter, templates: new TemplateStore(db) }, config.automation.email);
}

/** The housekeeping of the shared database, as pg-boss scheduled jobs (background work is a job). */
export const HOUSEKEEPING = { logs: 'logs-retention', usage: 'usage-sample' } as const;

/**
 * With jobs running, the log store's retention and the usage samples run every minute as
 * scheduled jobs (stored in the database: they survive restarts and run once for all
 * instances) instead of this process's timers; without jobs (PGlite) the timers stay. A usage
 * sample is taken at start too, so a fresh server shows a point at once. The expiry sweep of
 * resumable uploads stays a timer of each instance: the uploads in progress are on that
 * instance's own disk.
 */
async function startHousekeeping(
  config: Readonly<Config>,
  jobs: Jobs | null,
  areas: { db: Db; logs: LogsService; flushAiUsage: () => Promise<void> },
  life: Lifecycle,
): Promise<UsageHistory> {
  const usage = new UsageHistory(areas.db, {
    intervalSeconds: config.logs.usageSampleSeconds,
    countFunctions: config.logs.store,
    // This instance's function calls and AI usage still in their batches are written first.
    settle: async () => {
      await Promise.all([areas.logs.flush(), areas.flushAiUsage()]);
    },
  });
  // A failed sample is a line in the log, never a failed start: the next tick tries again.
  const tick = () =>
    usage
      .tick()
      .catch((err) => void areas.logs.write('jobs', 'warn', 'could not take the usage sample', { err: String(err) }));
  await tick();
  if (!jobs) {
    // A sample is due once per interval; ticking at least once a minute takes it soon after.
    const timer = setInterval(() => void tick(), Math.min(config.logs.usageSampleSeconds, 60) * 1000);
    timer.unref();
    life.onClose(async () => clearInterval(timer));
    return usage;
  }
  await jobs.every(HOUSEKEEPING.logs, '* * * * *', async () => ({ dropped: await areas.logs.prune() }));
  areas.logs.pruneByJob();
  // Every minute: the job takes the sample only when its interval is due (UsageHistory.sample).
  await jobs.every(HOUSEKEEPING.usage, '* * * * *', () => usage.tick());
  return usage;
}
