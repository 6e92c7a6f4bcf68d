import type { Counter, Histogram } from 'prom-client';

/** The answered requests of one (method, route, status) since the last fold. */
interface Series {
  readonly method: string;
  readonly route: string;
  readonly status: number;
  count: number;
  sum: number;
  /** Observations per latency bucket (not cumulative); the last slot is above every bound. */
  readonly buckets: number[];
}

/** prom-client's state of one label set of a histogram (lib/histogram.js), the shape its export reads. */
interface HistogramEntry {
  labels: Record<string, string>;
  bucketValues: Record<number, number>;
  sum: number;
  count: number;
}

/**
 * The HTTP request metrics counted on the request path in plain numbers (three map lookups and
 * a few additions), folded into prom-client's counter and histogram when they are read (a
 * scrape): prom-client's labelled `inc` and `observe` hash their labels on every call, 2-3% of
 * the CPU of a health check (issue #38). The exposition is the same as observing each request.
 */
export class RequestTally {
  /** route → method → status: keys are the route pattern and method strings, whose hashes V8 caches. */
  private readonly series = new Map<string, Map<string, Map<number, Series>>>();
  /** The series with counts not yet folded. */
  private readonly touched: Series[] = [];

  constructor(
    private readonly bounds: readonly number[],
    private readonly requests: Counter<'method' | 'route' | 'status'>,
    private readonly latency: Histogram<'method' | 'route'>,
  ) {}

  add(method: string, route: string, status: number, seconds: number): void {
    let byMethod = this.series.get(route);
    if (byMethod === undefined) this.series.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
    let s = byStatus.get(status);
    if (s === undefined) {
      s = { method, route, status, count: 0, sum: 0, buckets: new Array(this.bounds.length + 1).fill(0) };
      byStatus.set(status, s);
    }
    if (s.count === 0) this.touched.push(s);
    countInto(s, this.bounds, seconds);
  }

  /** Adds the counts since the last fold to the prom-client metrics (the metrics' `collect`). */
  fold(): void {
    if (!this.touched.length) return;
    for (const s of this.touched) {
      this.requests.inc({ method: s.method, route: s.route, status: String(s.status) }, s.count);
      // The histogram is written only here: its entries are keyed by (method, route) as we like.
      addToHistogram(this.latency, `${s.method} ${s.route}`, { method: s.method, route: s.route }, this.bounds, s);
      s.count = 0;
      s.sum = 0;
      s.buckets.fill(0);
    }
    this.touched.length = 0;
  }
}

/** Counts one value into plain counts: its bucket (the first bound it does not exceed), the sum and the count. */
export function countInto(
  counts: { readonly buckets: number[]; sum: number; count: number },
  bounds: readonly number[],
  value: number,
): void {
  counts.count++;
  counts.sum += value;
  let i = 0;
  while (i < bounds.length && value > bounds[i]!) i++;
  counts.buckets[i]!++;
}

/**
 * Adds counts taken in plain numbers (`buckets` per bound, not cumulative, the last one above
 * every bound) to the entry `key` of a prom-client histogram, made with `labels` when new: the
 * exposition is the same as observing each value. Only for histograms written by no one else.
 */
export function addToHistogram(
  histogram: Histogram<string>,
  key: string,
  labels: Record<string, string>,
  bounds: readonly number[],
  counts: { readonly buckets: readonly number[]; sum: number; count: number },
): void {
  const entries = (histogram as unknown as { hashMap: Record<string, HistogramEntry> }).hashMap;
  let e = entries[key];
  if (e === undefined) {
    const bucketValues: Record<number, number> = {};
    for (const b of bounds) bucketValues[b] = 0;
    entries[key] = e = { labels, bucketValues, sum: 0, count: 0 };
  }
  for (let i = 0; i < bounds.length; i++) e.bucketValues[bounds[i]!]! += counts.buckets[i]!;
  e.sum += counts.sum;
  e.count += counts.count;
}
