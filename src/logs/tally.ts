import type { LogRecord } from './types.js';

/** What a tally counted in its window: the line it stores is built from this. */
export interface TallySummary {
  count: number;
  /** Times (ms since the epoch) of the first and the last answer counted. */
  from: number;
  to: number;
  /** Durations in ms, to 0.01 ms below 10 ms and to about 1% above; `maxMs` exact. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  lastRequestId: string;
  /** The first few distinct client addresses (at most MAX_IPS). */
  ips: string[];
}

const WINDOW_MS = 60_000;
const MAX_IPS = 5;
// Durations: 0.01 ms steps below 10 ms, then 64 steps per doubling up to ~100 s, then the last bucket.
const LINEAR = 1000;
const STEPS = 64;
const SIZE = LINEAR + 14 * STEPS;

const bucketOf = (ms: number): number =>
  ms < 10 ? Math.max(0, Math.floor(ms * 100)) : Math.min(SIZE - 1, LINEAR + Math.floor(Math.log2(ms / 10) * STEPS));
const lowestOf = (i: number): number => (i < LINEAR ? i / 100 : 10 * 2 ** ((i - LINEAR) / STEPS));

/**
 * Many alike answers counted into one log line per clock minute instead of one line each (the
 * front lane's health probes, docs/logs.md): `add` is a few array writes; the line is stored when
 * the minute ends (an unref'd timer, in-memory housekeeping), when another minute's answer comes,
 * or at `take` (the log store's flush and close), so nothing counted is lost.
 */
export class LineTally {
  private readonly buckets = new Uint32Array(SIZE);
  private count = 0;
  private from = 0;
  private to = 0;
  private end = 0;
  private max = 0;
  private lastRequestId = '';
  private ips: string[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly describe: (s: TallySummary) => LogRecord,
    private readonly store: (r: LogRecord) => void,
  ) {}

  /** Counts one answer given at `time` (ms since the epoch) that took `durationMs`. */
  add(time: number, durationMs: number, requestId: string, ip: string | undefined): void {
    if (time >= this.end) {
      this.take();
      this.start(time);
    }
    this.count++;
    this.to = time;
    this.buckets[bucketOf(durationMs)]!++;
    if (durationMs > this.max) this.max = durationMs;
    this.lastRequestId = requestId;
    if (ip !== undefined && this.ips.length < MAX_IPS && !this.ips.includes(ip)) this.ips.push(ip);
  }

  private start(time: number): void {
    this.from = time;
    this.end = (Math.floor(time / WINDOW_MS) + 1) * WINDOW_MS;
    this.timer = setTimeout(() => this.take(), Math.max(0, this.end - Date.now())).unref();
  }

  /** Stores the line of what was counted (none when nothing was) and starts anew. */
  take(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.end = 0;
    if (this.count === 0) return;
    const summary: TallySummary = {
      count: this.count,
      from: this.from,
      to: this.to,
      p50Ms: this.percentile(0.5),
      p99Ms: this.percentile(0.99),
      maxMs: round(this.max),
      lastRequestId: this.lastRequestId,
      ips: this.ips,
    };
    this.count = 0;
    this.max = 0;
    this.ips = [];
    this.buckets.fill(0);
    this.store(this.describe(summary));
  }

  /** The lowest duration of the bucket holding the q-th answer, never above the maximum. */
  private percentile(q: number): number {
    const rank = Math.max(1, Math.ceil(q * this.count));
    let seen = 0;
    for (let i = 0; i < SIZE; i++) {
      seen += this.buckets[i]!;
      if (seen >= rank) return round(Math.min(lowestOf(i), this.max));
    }
    return round(this.max);
  }
}

const round = (ms: number): number => Math.round(ms * 100) / 100;
