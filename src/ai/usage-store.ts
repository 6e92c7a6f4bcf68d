import type { Queryable } from '../db/types.js';

export type CallerKind = 'user' | 'admin' | 'anon';

/** One call through the gateway, as stored in ai.usage. */
export interface UsageRecord {
  userId: string | null;
  caller: CallerKind;
  endpoint: 'chat' | 'images' | 'embeddings';
  model: string;
  stream: boolean;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  images: number;
  estimated: boolean;
  latencyMs: number;
  /** The HTTP status Plinth answered; 499 when the client went away first. */
  status: number;
  /** The error code answered, if any. */
  error: string | null;
}

/** One line of the admin report: a caller and a model over the period. */
export interface UsageLine {
  userId: string | null;
  email: string | null;
  caller: CallerKind;
  model: string;
  requests: number;
  errors: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  images: number;
  avgLatencyMs: number;
}

export interface DailyUsage {
  day: string;
  model: string;
  userId: string | null;
  email: string | null;
  caller: CallerKind;
  requests: number;
  totalTokens: number;
  images: number;
}

export interface UsageQuery {
  from: Date | null;
  to: Date | null;
  userId: string | null;
}

const INT4_MAX = 2_147_483_647;
const int = (n: number) => Math.max(0, Math.min(INT4_MAX, Math.round(Number.isFinite(n) ? n : 0)));

/** Rows are written in batches: at most this many in one statement... */
const BATCH_ROWS = 200;
/** ...and at most this long after the call they describe (unless someone reads first). */
const BATCH_MS = 100;

/**
 * Writes usage rows off the response path, batched into one multi-row insert (the answer does
 * not wait for the insert, and an embedded database is spared one statement per call), and
 * reads them back. `flush()` writes what is buffered and waits for writes in flight; reads
 * flush first, so one instance always sees its own calls.
 */
export class UsageStore {
  private buffer: Array<{ row: UsageRecord; onError: (err: unknown) => void }> = [];
  private timer: NodeJS.Timeout | null = null;
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly db: Queryable) {}

  /** Queues a row; a failed write goes to `onError` (the request log), never to the caller. */
  record(row: UsageRecord, onError: (err: unknown) => void): void {
    this.buffer.push({ row, onError });
    if (this.buffer.length >= BATCH_ROWS) this.write();
    else if (!this.timer) {
      this.timer = setTimeout(() => this.write(), BATCH_MS);
      this.timer.unref();
    }
  }

  async flush(): Promise<void> {
    this.write();
    while (this.pending.size) await Promise.all([...this.pending]);
  }

  private write(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.buffer;
    if (!batch.length) return;
    this.buffer = [];
    const rows = batch.map((b) => b.row);
    const col = <T>(f: (r: UsageRecord) => T) => rows.map(f);
    const p: Promise<void> = this.db
      .query(
        // A user deleted since the call would fail the whole batch on the foreign key: keep the row, unattributed.
        `insert into ai.usage (user_id, caller, endpoint, model, stream, prompt_tokens, completion_tokens, total_tokens,
           images, estimated, latency_ms, status, error)
         select case when exists (select 1 from auth.users au where au.id = u.user_id) then u.user_id end,
                u.caller, u.endpoint, u.model, u.stream, u.prompt_tokens, u.completion_tokens, u.total_tokens,
                u.images, u.estimated, u.latency_ms, u.status, u.error
           from unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::boolean[], $6::int[], $7::int[], $8::int[],
                $9::int[], $10::boolean[], $11::int[], $12::int[], $13::text[])
             as u (user_id, caller, endpoint, model, stream, prompt_tokens, completion_tokens, total_tokens,
                   images, estimated, latency_ms, status, error)`,
        [
          col((r) => r.userId),
          col((r) => r.caller),
          col((r) => r.endpoint),
          // Postgres text cannot hold NUL: one hostile model name must not sink the batch.
          col((r) => r.model.replace(/\u0000/g, '').slice(0, 256)),
          col((r) => r.stream),
          col((r) => int(r.promptTokens)),
          col((r) => int(r.completionTokens)),
          col((r) => int(r.totalTokens)),
          col((r) => int(r.images)),
          col((r) => r.estimated),
          col((r) => int(r.latencyMs)),
          col((r) => r.status),
          col((r) => r.error),
        ],
      )
      .then(
        () => undefined,
        (err) => {
          for (const report of new Set(batch.map((b) => b.onError))) report(err);
        },
      )
      .finally(() => this.pending.delete(p));
    this.pending.add(p);
  }

  /** Tokens used since `since` by one user, or by all admin or all anon callers together. */
  async tokensSince(caller: { kind: CallerKind; userId: string | null }, since: Date): Promise<number> {
    await this.flush();
    const { rows } =
      caller.kind === 'user'
        ? await this.db.query<{ used: number }>(
            'select coalesce(sum(total_tokens), 0)::float8 as used from ai.usage where user_id = $1 and created_at >= $2',
            [caller.userId, since],
          )
        : await this.db.query<{ used: number }>(
            'select coalesce(sum(total_tokens), 0)::float8 as used from ai.usage where caller = $1 and created_at >= $2',
            [caller.kind, since],
          );
    return Number(rows[0]?.used ?? 0);
  }

  /** Sums per UTC day, model and caller over the period, oldest day first (the dashboard's charts). */
  async daily(q: UsageQuery): Promise<DailyUsage[]> {
    await this.flush();
    const { rows } = await this.db.query<Record<string, unknown>>(
      `select to_char(date_trunc('day', u.created_at at time zone 'UTC'), 'YYYY-MM-DD') as day,
              u.model, u.user_id, au.email, u.caller,
              count(*)::float8 as requests, sum(u.total_tokens)::float8 as total_tokens, sum(u.images)::float8 as images
         from ai.usage u
         left join auth.users au on au.id = u.user_id
        where ($1::timestamptz is null or u.created_at >= $1::timestamptz)
          and ($2::timestamptz is null or u.created_at < $2::timestamptz)
          and ($3::uuid is null or u.user_id = $3::uuid)
        group by 1, u.model, u.user_id, au.email, u.caller
        order by 1, u.model, au.email nulls first`,
      [q.from, q.to, q.userId],
    );
    return rows.map((r) => ({
      day: String(r.day),
      model: String(r.model),
      userId: (r.user_id as string | null) ?? null,
      email: (r.email as string | null) ?? null,
      caller: r.caller as CallerKind,
      requests: Number(r.requests),
      totalTokens: Number(r.total_tokens),
      images: Number(r.images),
    }));
  }

  /** Sums per caller and model over the period, biggest token users first. */
  async summary(q: UsageQuery): Promise<UsageLine[]> {
    await this.flush();
    const { rows } = await this.db.query<Record<string, unknown>>(
      `select u.user_id, au.email, u.caller, u.model,
              count(*)::float8 as requests,
              (count(*) filter (where u.status >= 400))::float8 as errors,
              sum(u.prompt_tokens)::float8 as prompt_tokens,
              sum(u.completion_tokens)::float8 as completion_tokens,
              sum(u.total_tokens)::float8 as total_tokens,
              sum(u.images)::float8 as images,
              avg(u.latency_ms)::float8 as avg_latency_ms
         from ai.usage u
         left join auth.users au on au.id = u.user_id
        where ($1::timestamptz is null or u.created_at >= $1::timestamptz)
          and ($2::timestamptz is null or u.created_at < $2::timestamptz)
          and ($3::uuid is null or u.user_id = $3::uuid)
        group by u.user_id, au.email, u.caller, u.model
        order by sum(u.total_tokens) desc, count(*) desc, u.model`,
      [q.from, q.to, q.userId],
    );
    return rows.map((r) => ({
      userId: (r.user_id as string | null) ?? null,
      email: (r.email as string | null) ?? null,
      caller: r.caller as CallerKind,
      model: String(r.model),
      requests: Number(r.requests),
      errors: Number(r.errors),
      promptTokens: Number(r.prompt_tokens),
      completionTokens: Number(r.completion_tokens),
      totalTokens: Number(r.total_tokens),
      images: Number(r.images),
      avgLatencyMs: Math.round(Number(r.avg_latency_ms)),
    }));
  }
}
