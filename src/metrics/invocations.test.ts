import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Metrics } from './index.js';

const NAMES = ['plinth_function_invocations_total', 'plinth_function_duration_seconds'];

/** The same two metrics observed invocation by invocation, as prom-client does it. */
function direct() {
  const registry = new Registry();
  const invocations = new Counter({
    name: NAMES[0]!,
    help: 'Function invocations, by start (warm: the version was loaded; cold: loaded for this call) and outcome (ok, error: 5xx or a fault).',
    labelNames: ['start', 'outcome'],
    registers: [registry],
  });
  const seconds = new Histogram({
    name: NAMES[1]!,
    help: 'Time to the head of a function response, by start.',
    labelNames: ['start'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return {
    registry,
    observe(cold: boolean, ok: boolean, s: number) {
      const start = cold ? 'cold' : 'warm';
      invocations.inc({ start, outcome: ok ? 'ok' : 'error' });
      seconds.observe({ start }, s);
    },
  };
}

/** The exposition of the two metrics, with each sum rounded (added in another order). */
async function text(registry: Registry): Promise<string> {
  const parts = await Promise.all(NAMES.map((n) => registry.getSingleMetricAsString(n)));
  return parts
    .join('\n')
    .replace(/(_sum\{[^}]*\}) (\S+)/g, (_m, k: string, v: string) => `${k} ${Number(v).toFixed(9)}`);
}

const ROUNDS: Array<Array<[boolean, boolean, number]>> = [
  [
    [true, true, 0.04],
    [false, true, 0.0004],
    [false, true, 0.003],
    [false, false, 12],
    [true, false, 0.2],
  ],
  [
    [false, true, 0.0009],
    [false, false, 0.001],
  ],
  [],
];

describe('function invocation metrics counted in plain numbers and folded at scrape', () => {
  it('expose the same counts, buckets and sums as observing each invocation', async () => {
    const metrics = new Metrics({}, { processMetrics: false });
    const expected = direct();
    // Nothing observed yet: the same empty metrics.
    expect(await text(metrics.registry)).toBe(await text(expected.registry));
    for (const round of ROUNDS) {
      for (const [cold, ok, s] of round) {
        metrics.observeInvocation(cold, ok, s);
        expected.observe(cold, ok, s);
      }
      // Scraped after each round: a fold adds only what came since the last one.
      expect(await text(metrics.registry)).toBe(await text(expected.registry));
    }
    const got = await text(metrics.registry);
    expect(got).toContain('plinth_function_invocations_total{start="warm",outcome="ok"} 3');
    expect(got).toContain('plinth_function_invocations_total{start="cold",outcome="error"} 1');
    expect(got).toContain('plinth_function_duration_seconds_bucket{le="0.001",start="warm"} 3');
    expect(got).toContain('plinth_function_duration_seconds_count{start="warm"} 5');
  });
});
