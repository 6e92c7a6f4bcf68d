import type { Queryable } from '../db/types.js';

/** The ranges GET /api/metrics/history answers, in seconds. */
export const HISTORY_RANGES = { '1h': 3600, '24h': 86_400, '7d': 7 * 86_400, '30d': 30 * 86_400 } as const;
export type HistoryRange = keyof typeof HISTORY_RANGES;

/** Samples older than this are deleted by the sampling job. */
export const HISTORY_RETENTION_DAYS = 30;
/**
 * An interval is sampled no sooner than this after it ends: function calls reach the log store
 * and AI calls their table in batches (within 0.5 s); the sampling instance writes its own
 * pending ones first (`settle`).
 */
const SETTLE_SECONDS = 3;
/**
 * The counts of the samples of this many seconds (at least two intervals) are counted again at
 * each tick: a call that reached its table late (another instance's batch, a slow store) is
 * then counted in the sample of the time it happened instead of never.
 */
const RECOUNT_SECONDS = 600;
/** A range answers about this many points at most: past it, neighbouring samples are added up. */
const MAX_POINTS = 720;

/** One point: the sizes when sampled, the counts since the previous point. */
export interface UsageSample {
  at: string;
  databaseBytes: number;
  storageBytes: number;
  /** Null when the log store (where invocations are recorded) was off. */
  functionCalls: number | null;
  functionErrors: number | null;
  aiTokens: number;
}

export interface UsageHistoryOptions {
  /** One sample per this many seconds (USAGE_SAMPLE_SECONDS). */
  intervalSeconds: number;
  /** Whether function invocations reach the log store (LOGS_STORE): else their counts are null. */
  countFunctions: boolean;
  /** Writes this instance's pending log lines and AI usage rows, so that a sample finds them. */
  settle?: () => Promise<void>;
}

// The interval that ended SETTLE_SECONDS ago, on the grid of multiples of the interval since the
// epoch: every instance computes the same `at`, and only one row per `at` can exist. A sample
// is taken only past the newest one; its counts cover the time since that one (or one interval).
// Invocations are the function lines with `cold` in their fields (console output has none), a
// counted line (warm HTTP calls, one line a minute: docs/logs.md) as many as its `count`.
const SAMPLE = `
with point as (
  select to_timestamp(floor((extract(epoch from now()) - $2::int) / $1::int) * $1::int) as at, (select max(at) from system.usage_samples) as last
), win as (
  select at, coalesce(last, at - make_interval(secs => $1::int)) as since from point where last is null or at > last
)
insert into system.usage_samples (at, database_bytes, storage_bytes, function_calls, function_errors, ai_tokens)
select w.at, pg_database_size(current_database()),
       (select coalesce(sum(size), 0) from storage.objects),
       calls.n, calls.errors,
       (select coalesce(sum(total_tokens), 0) from ai.usage u where u.created_at >= w.since and u.created_at < w.at)
  from win w
  left join lateral (
    select coalesce(sum(coalesce((l.fields->>'count')::int, 1)), 0)::int as n, count(*) filter (where l.level = 'error')::int as errors
      from system.logs l where l.source = 'functions' and l.fields->'cold' is not null and l.time >= w.since and l.time < w.at
  ) calls on $3::boolean
on conflict (at) do nothing
returning at`;

// The counts of the recent samples again, each over the time since the sample before it (or one
// interval for the first), changed only where they differ.
const RECOUNT = `
with s as (
  select u.at, coalesce((select max(p.at) from system.usage_samples p where p.at < u.at), u.at - make_interval(secs => $1::int)) as since
    from system.usage_samples u where u.at > now() - make_interval(secs => $2::int)
), c as (
  select s.at,
         case when $3::boolean then (select coalesce(sum(coalesce((l.fields->>'count')::int, 1)), 0)::int from system.logs l
           where l.source = 'functions' and l.fields->'cold' is not null and l.time >= s.since and l.time < s.at) end as calls,
         case when $3::boolean then (select count(*)::int from system.logs l
           where l.source = 'functions' and l.fields->'cold' is not null and l.level = 'error' and l.time >= s.since and l.time < s.at) end as errors,
         (select coalesce(sum(total_tokens), 0)::bigint from ai.usage a where a.created_at >= s.since and a.created_at < s.at) as tokens
    from s
)
update system.usage_samples u
   set function_calls = c.calls, function_errors = c.errors, ai_tokens = c.tokens
  from c
 where u.at = c.at and (u.function_calls, u.function_errors, u.ai_tokens) is distinct from (c.calls, c.errors, c.tokens)`;

// Samples of the range, added up per step (a step of one interval keeps every sample): the
// newest sizes of the step, the sum of its counts.
const READ = `
select max(at) as at,
       (array_agg(database_bytes order by at desc))[1] as database_bytes,
       (array_agg(storage_bytes order by at desc))[1] as storage_bytes,
       sum(function_calls) as function_calls, sum(function_errors) as function_errors, sum(ai_tokens) as ai_tokens
  from system.usage_samples
 where at > now() - make_interval(secs => $1::int)
 group by date_bin(make_interval(secs => $2::int), at, timestamptz 'epoch')
 order by 1`;

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/**
 * Usage over time (system.usage_samples, migration 0235): database and storage bytes, function
 * calls and errors, AI tokens, sampled once per interval across all instances and kept
 * HISTORY_RETENTION_DAYS. Counts are derived from what the log store and ai.usage already keep.
 */
export class UsageHistory {
  constructor(
    private readonly db: Queryable,
    readonly opts: UsageHistoryOptions,
  ) {}

  /**
   * Takes the sample of the interval that ended last, unless it (or a newer one) exists, after
   * writing this instance's pending lines; then counts the recent samples again (calls stored
   * late). True when a sample was taken.
   */
  async sample(): Promise<boolean> {
    await this.opts.settle?.();
    const { rows } = await this.db.query(SAMPLE, [this.opts.intervalSeconds, SETTLE_SECONDS, this.opts.countFunctions]);
    const window = Math.max(RECOUNT_SECONDS, 2 * this.opts.intervalSeconds);
    await this.db.query(RECOUNT, [this.opts.intervalSeconds, window, this.opts.countFunctions]);
    return rows.length > 0;
  }

  /** Deletes samples past the retention; returns how many. */
  async prune(): Promise<number> {
    const r = await this.db.query(
      `delete from system.usage_samples where at < now() - make_interval(days => $1::int)`,
      [HISTORY_RETENTION_DAYS],
    );
    return r.rowCount;
  }

  /** What the sampling job runs: the due sample, then the retention. */
  async tick(): Promise<{ sampled: boolean; pruned: number }> {
    return { sampled: await this.sample(), pruned: await this.prune() };
  }

  /** The seconds each point of a range stands for: whole intervals, about MAX_POINTS points at most. */
  stepSeconds(range: HistoryRange): number {
    const i = this.opts.intervalSeconds;
    return i * Math.max(1, Math.ceil(HISTORY_RANGES[range] / MAX_POINTS / i));
  }

  /** The points of a range, oldest first. */
  async read(range: HistoryRange): Promise<UsageSample[]> {
    const { rows } = await this.db.query<Record<string, unknown>>(READ, [
      HISTORY_RANGES[range],
      this.stepSeconds(range),
    ]);
    return rows.map((r) => ({
      at: (r.at instanceof Date ? r.at : new Date(String(r.at))).toISOString(),
      databaseBytes: Number(r.database_bytes),
      storageBytes: Number(r.storage_bytes),
      functionCalls: num(r.function_calls),
      functionErrors: num(r.function_errors),
      aiTokens: Number(r.ai_tokens),
    }));
  }
}
