import type { Queryable } from '../db/types.js';

export interface LogLine {
  /** Grows with every line: pass the last one seen as `after` to get only newer lines. */
  id: number;
  timestamp: string;
  level: string;
  message: string;
}

const iso = (v: unknown): string => (v instanceof Date ? v : new Date(String(v))).toISOString();
const LEVELS = new Set(['debug', 'info', 'warn', 'error']);

/**
 * Function console output, kept in Postgres (functions.logs) so every API instance sees
 * the same lines. Lines are buffered and written in batches; each function keeps its
 * last `keep` lines.
 */
export class FunctionLogs {
  private buffer: Array<{ functionId: string; level: string; message: string; at: Date }> = [];
  private flushing: Promise<void> | null = null;
  /** The flush due for what is buffered (none while nothing is: an idle server stays asleep). */
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Queryable,
    private readonly opts: { keep?: number; flushMs?: number; onError?: (err: unknown) => void } = {},
  ) {}

  add(functionId: string, level: string, message: string): void {
    if (this.buffer.length >= 10_000) return; // a flood while the database is slow: drop rather than grow
    this.buffer.push({ functionId, level: LEVELS.has(level) ? level : 'info', message, at: new Date() });
    this.schedule();
  }

  private schedule(): void {
    this.timer ??= setTimeout(() => {
      this.timer = null;
      // A batch holds at most 1000 lines: what is left waits for the next turn.
      void this.flush().then(() => this.buffer.length && this.schedule());
    }, this.opts.flushMs ?? 250).unref();
  }

  /** Writes what is buffered; resolves when it is stored. */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => this.flush());
    if (!this.buffer.length) return Promise.resolve();
    const batch = this.buffer.splice(0, 1000);
    this.flushing = this.write(batch)
      .catch((err) => this.opts.onError?.(err))
      .finally(() => {
        this.flushing = null;
      });
    return this.flushing;
  }

  private async write(batch: Array<{ functionId: string; level: string; message: string; at: Date }>): Promise<void> {
    await this.db.query(
      `insert into functions.logs (function_id, level, message, created_at)
       select f, l, m, a from unnest($1::uuid[], $2::text[], $3::text[], $4::timestamptz[]) with ordinality as t(f, l, m, a, n)
       where exists (select 1 from functions.functions where id = f)
       order by n`,
      [
        batch.map((b) => b.functionId),
        batch.map((b) => b.level),
        batch.map((b) => b.message),
        batch.map((b) => b.at.toISOString()),
      ],
    );
    const keep = this.opts.keep ?? 1000;
    for (const id of new Set(batch.map((b) => b.functionId))) {
      await this.db.query(
        `delete from functions.logs where function_id = $1 and id <= (
           select id from functions.logs where function_id = $1 order by id desc offset $2 limit 1)`,
        [id, keep],
      );
    }
  }

  /**
   * The newest `limit` lines of a function, oldest first; with `after`, the first `limit`
   * lines that came after the line of that id (to follow new output).
   */
  async recent(functionId: string, limit: number, after: number | null = null): Promise<LogLine[]> {
    await this.flush();
    const { rows } =
      after === null
        ? await this.db.query(
            `select id, level, message, created_at from (
               select id, level, message, created_at from functions.logs where function_id = $1 order by id desc limit $2
             ) t order by id`,
            [functionId, limit],
          )
        : await this.db.query(
            `select id, level, message, created_at from functions.logs where function_id = $1 and id > $3 order by id limit $2`,
            [functionId, limit, after],
          );
    return rows.map((r) => ({
      id: Number(r.id),
      timestamp: iso(r.created_at),
      level: String(r.level),
      message: String(r.message),
    }));
  }

  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flush();
  }
}
