import type { LineTally, LogRecord, TallySummary } from '../logs/index.js';

/** One invocation as the log and the metrics see it (status null: it failed before an answer). */
export interface Invocation {
  slug: string;
  functionId: string;
  status: number | null;
  cold: boolean;
  seconds: number;
  error: string | null;
  /** The HTTP request it answered; null when none did (a schedule's call). */
  requestId: string | null;
}

/** The log store's line of an invocation (source functions), built when its batch is written. */
export function invocationRecord(time: number, ok: boolean, inv: Invocation): LogRecord {
  const { seconds, ...fields } = inv;
  return {
    time,
    source: 'functions',
    level: ok ? 'info' : 'error',
    message: `invoked ${inv.slug}: ${inv.status ?? inv.error}`,
    fields: { ...fields, durationMs: Math.round(seconds * 1e5) / 100 },
  };
}

/** The log store as counted invocations need it (logs/service.ts). */
export interface TallyingLogs {
  readonly enabled: boolean;
  tally(describe: (s: TallySummary) => LogRecord): LineTally;
}

/** A function's answers per status class (below 300, 3xx, 4xx) since its tally's last line. */
type Statuses = [number, number, number];

interface Counted {
  tally: LineTally;
  statuses: Statuses;
}

/**
 * The `functions` line of a minute's counted calls of one function (docs/logs.md): the fields of
 * an invocation's line that apply to many (`cold: false`, so usage history counts them by
 * `count`), `durationMs` their median, and what only a count has.
 */
function countedInvocationRecord(slug: string, functionId: string, statuses: Statuses): (s: TallySummary) => LogRecord {
  return (s) => {
    const [ok, moved, refused] = statuses;
    statuses.fill(0);
    return {
      time: s.to,
      source: 'functions',
      level: 'info',
      message: `invoked ${slug}: ${s.count} calls answered (one line a minute)`,
      fields: {
        slug,
        functionId,
        cold: false,
        count: s.count,
        statuses: { '2xx': ok, '3xx': moved, '4xx': refused },
        durationMs: s.p50Ms,
        p99Ms: s.p99Ms,
        maxMs: s.maxMs,
        from: new Date(s.from).toISOString(),
        to: new Date(s.to).toISOString(),
        lastRequestId: s.lastRequestId,
      },
    };
  };
}

/**
 * Warm calls answered over HTTP below 500 are counted into one `functions` line per function
 * per minute, not stored a line each: the request's own `api` line records each call
 * (docs/logs.md, docs/decisions.md). Cold starts, 5xx, errors and calls with no HTTP request
 * (schedules) keep a line each: `add` says false for those, and for all with the store off.
 */
export class CountedInvocations {
  private readonly byFunction = new Map<string, Counted>();

  constructor(private readonly logs: TallyingLogs) {}

  add(inv: Invocation): boolean {
    const { status, requestId } = inv;
    if (requestId === null || status === null || status >= 500 || inv.cold || inv.error !== null) return false;
    if (!this.logs.enabled) return true;
    let c = this.byFunction.get(inv.functionId);
    if (c === undefined) {
      const statuses: Statuses = [0, 0, 0];
      c = { tally: this.logs.tally(countedInvocationRecord(inv.slug, inv.functionId, statuses)), statuses };
      this.byFunction.set(inv.functionId, c);
    }
    // The tally may store the minute before this call's first: the status is counted after it.
    c.tally.add(Date.now(), inv.seconds * 1000, requestId, undefined);
    c.statuses[status < 300 ? 0 : status < 400 ? 1 : 2]++;
    return true;
  }
}
