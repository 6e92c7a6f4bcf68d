import type { Queryable } from '../db/types.js';
import { AppError } from '../errors/index.js';
import { LEVELS, type LogEntry, type LogFilter, type LogPage, type LogRecord } from './types.js';

const DEFAULT_LIMIT = 100;
const iso = (v: unknown): string => (v instanceof Date ? v : new Date(String(v))).toISOString();

/** `%`, `_` and `\` taken literally in an ILIKE pattern. */
const likeLiteral = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The cursor of a page: the id of its last (oldest) line, opaque to callers. */
export const encodeCursor = (id: string): string => Buffer.from(`l:${id}`).toString('base64url');

function decodeCursor(cursor: string): string {
  const m = /^l:(\d{1,19})$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (!m || BigInt(m[1]!) > 9223372036854775807n)
    throw new AppError('INVALID_LOG_QUERY', {
      message: 'The cursor is not one this server handed out.',
      nextActions: 'Pass the nextCursor of the previous page unchanged, or leave cursor out for the newest lines.',
    });
  return m[1]!;
}

function time(name: string, value: string | undefined): string | null {
  if (value === undefined) return null;
  const t = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : NaN;
  if (!Number.isFinite(t)) {
    throw new AppError('INVALID_LOG_QUERY', {
      message: `${name} must be a date and time such as 2026-01-31T12:00:00Z (got "${value.slice(0, 64)}").`,
    });
  }
  return new Date(t).toISOString();
}

/** The WHERE clause and its bind parameters for a filter (cursor aside). */
function where(f: LogFilter): { sql: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  const add = (clause: (n: string) => string, value: unknown) => {
    params.push(value);
    parts.push(clause(`$${params.length}`));
  };
  const from = time('from', f.from);
  const to = time('to', f.to);
  if (from && to && from > to)
    throw new AppError('INVALID_LOG_QUERY', {
      message: 'from is after to.',
      nextActions: 'Swap from and to, or leave one out.',
    });
  if (f.sources?.length) add((n) => `source = any(${n}::text[])`, f.sources);
  if (from) add((n) => `time >= ${n}::timestamptz`, from);
  if (to) add((n) => `time <= ${n}::timestamptz`, to);
  if (f.level) add((n) => `level = any(${n}::text[])`, LEVELS.slice(LEVELS.indexOf(f.level)));
  if (f.q) add((n) => `(message ilike ${n} or fields::text ilike ${n})`, likeLiteral(f.q));
  return { sql: parts.length ? parts.join(' and ') : 'true', params };
}

function entry(r: Record<string, unknown>): LogEntry {
  return {
    id: String(r.id),
    timestamp: iso(r.time),
    source: String(r.source),
    level: String(r.level),
    eventMessage: String(r.message),
    body: { level: r.level, ...(r.fields as Record<string, unknown>) },
  };
}

/** The SQL of the log store (system.logs, migrations 0130 and 0425). */
export class LogStore {
  constructor(private readonly db: Queryable) {}

  /**
   * One statement for a whole batch, sent as one JSON bind parameter: JSON.stringify is native,
   * where pg's text-array encoding escapes every string in JavaScript (measured: the cheaper of
   * the two on the request thread, docs/decisions.md). Read as `json`, not `jsonb`: Postgres
   * only checks the text and keeps each line's fields as written (migration 0425, issue #38).
   */
  async insert(batch: LogRecord[]): Promise<void> {
    await this.db.query(
      `insert into system.logs (time, source, level, message, fields)
       select to_timestamp(r.time / 1000.0), r.source, r.level, r.message, coalesce(r.fields, '{}')
         from json_to_recordset($1::json) as r(time float8, source text, level text, message text, fields json)`,
      [JSON.stringify(batch)],
    );
  }

  /** Drops lines older than the retention and the oldest past `maxRows`; returns how many. */
  async prune(retentionDays: number, maxRows: number): Promise<number> {
    const old = await this.db.query(`delete from system.logs where time < now() - make_interval(days => $1::int)`, [
      retentionDays,
    ]);
    // Ids grow with every line: all but the newest maxRows lie below max(id) - maxRows.
    const over = await this.db.query(
      `delete from system.logs where id <= (select max(id) from system.logs) - $1::bigint`,
      [maxRows],
    );
    return old.rowCount + over.rowCount;
  }

  /** A page of lines, newest first, with the number of all lines that match. */
  async read(f: LogFilter): Promise<LogPage> {
    const w = where(f);
    const limit = f.limit ?? DEFAULT_LIMIT;
    const params = [...w.params];
    let page = w.sql;
    if (f.cursor) {
      params.push(decodeCursor(f.cursor));
      page += ` and id < $${params.length}::bigint`;
    }
    params.push(limit + 1);
    const [rows, count] = await Promise.all([
      this.db.query(
        `select id, time, source, level, message, fields from system.logs where ${page} order by id desc limit $${params.length}`,
        params,
      ),
      this.db.query<{ n: number }>(`select count(*)::int as n from system.logs where ${w.sql}`, w.params),
    ]);
    const more = rows.rows.length > limit;
    const logs = rows.rows.slice(0, limit).map(entry);
    return {
      logs,
      total: count.rows[0]?.n ?? 0,
      nextCursor: more && logs.length ? encodeCursor(logs[logs.length - 1]!.id) : null,
    };
  }

  /** The sources that have lines: how many, and the time of the newest. */
  async sources(): Promise<Array<{ name: string; count: number; lastAt: string }>> {
    const { rows } = await this.db.query<{ source: string; n: number; last: unknown }>(
      `select source, count(*)::int as n, max(time) as last from system.logs group by source order by source`,
    );
    return rows.map((r) => ({ name: r.source, count: r.n, lastAt: iso(r.last) }));
  }

  /**
   * API requests per minute and route: count, errors (5xx), latency percentiles in ms. A counted
   * line (health probes) adds its `count`; its `durationMs` (the probes' median) is one sample.
   */
  async stats(f: { from?: string; to?: string; route?: string; limit?: number }): Promise<RouteMinute[]> {
    const from = time('from', f.from) ?? new Date(Date.now() - 3600_000).toISOString();
    const to = time('to', f.to) ?? new Date().toISOString();
    if (from > to)
      throw new AppError('INVALID_LOG_QUERY', {
        message: 'from is after to.',
        nextActions: 'Swap from and to, or leave one out.',
      });
    const { rows } = await this.db.query<Record<string, unknown>>(
      // fields is json (text): json_to_record reads each line's once, where ->> reads it per use.
      `select date_trunc('minute', l.time) as minute, f.method, coalesce(f.route, '(no route)') as route,
              sum(coalesce(f.count, 1))::int as count,
              coalesce(sum(coalesce(f.count, 1)) filter (where f.status::int >= 500), 0)::int as errors,
              percentile_cont(array[0.5, 0.95, 0.99]) within group (order by f."durationMs"::float8) as p
         from system.logs l,
              json_to_record(l.fields) as f(method text, route text, status text, "durationMs" text, count int)
        where l.source = 'api' and l.time >= $1::timestamptz and l.time <= $2::timestamptz and ($3::text is null or f.route = $3)
        group by 1, 2, 3 order by 1 desc, 4 desc limit $4`,
      [from, to, f.route ?? null, f.limit ?? 1000],
    );
    const round = (v: unknown) => Math.round(Number(v) * 100) / 100;
    return rows.map((r) => {
      const p = (r.p as unknown[]) ?? [];
      return {
        minute: iso(r.minute),
        method: String(r.method),
        route: String(r.route),
        count: Number(r.count),
        errors: Number(r.errors),
        p50Ms: round(p[0]),
        p95Ms: round(p[1]),
        p99Ms: round(p[2]),
      };
    });
  }
}

export interface RouteMinute {
  minute: string;
  method: string;
  route: string;
  count: number;
  errors: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
}
