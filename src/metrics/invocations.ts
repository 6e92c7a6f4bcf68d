import { Counter, Histogram, type Registry } from 'prom-client';
import { addToHistogram, countInto } from './requests.js';

type Start = 'warm' | 'cold';
type Outcome = 'ok' | 'error';

/** The invocations of one (start, outcome) since the last fold. */
interface Series {
  readonly start: Start;
  readonly outcome: Outcome;
  count: number;
  sum: number;
  /** Observations per duration bucket (not cumulative); the last slot is above every bound. */
  readonly buckets: number[];
}

/**
 * Function invocations counted on the call's path in plain numbers, folded into prom-client's
 * counter and histogram when they are read (a scrape), as the HTTP requests are (requests.ts):
 * prom-client's labelled `inc` and `observe` hash their labels on every call, ≈ 2% of a warm
 * call's CPU (issue #38). The exposition is the same as observing each invocation.
 */
export class InvocationTally {
  private readonly series: Series[];
  /** The series with counts not yet folded, in the order they were first counted. */
  private readonly touched: Series[] = [];

  constructor(
    private readonly bounds: readonly number[],
    private readonly invocations: Counter<'start' | 'outcome'>,
    private readonly seconds: Histogram<'start'>,
  ) {
    const starts: Start[] = ['warm', 'cold'];
    const outcomes: Outcome[] = ['ok', 'error'];
    this.series = starts.flatMap((start) =>
      outcomes.map((outcome) => ({ start, outcome, count: 0, sum: 0, buckets: new Array(bounds.length + 1).fill(0) })),
    );
  }

  add(cold: boolean, ok: boolean, seconds: number): void {
    const s = this.series[(cold ? 2 : 0) + (ok ? 0 : 1)]!;
    if (s.count === 0) this.touched.push(s);
    countInto(s, this.bounds, seconds);
  }

  /** Adds the counts since the last fold to the prom-client metrics (the metrics' `collect`). */
  fold(): void {
    for (const s of this.touched) {
      this.invocations.inc({ start: s.start, outcome: s.outcome }, s.count);
      // The histogram has the start only: both outcomes of a start add to its one entry.
      addToHistogram(this.seconds, s.start, { start: s.start }, this.bounds, s);
      s.count = 0;
      s.sum = 0;
      s.buckets.fill(0);
    }
    this.touched.length = 0;
  }
}

/** The function invocation metrics in `registers`, counted through the tally it returns. */
export function invocationTally(registers: Registry[], bounds: readonly number[]): InvocationTally {
  const fold = () => tally.fold();
  const tally: InvocationTally = new InvocationTally(
    bounds,
    new Counter({
      name: 'plinth_function_invocations_total',
      help: 'Function invocations, by start (warm: the version was loaded; cold: loaded for this call) and outcome (ok, error: 5xx or a fault).',
      labelNames: ['start', 'outcome'],
      registers,
      collect: fold,
    }),
    new Histogram({
      name: 'plinth_function_duration_seconds',
      help: 'Time to the head of a function response, by start.',
      labelNames: ['start'],
      buckets: [...bounds],
      registers,
      collect: fold,
    }),
  );
  return tally;
}
