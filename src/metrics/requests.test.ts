import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Metrics } from './index.js';

const NAMES = ['plinth_http_requests_total', 'plinth_http_request_duration_seconds'];

/** The same two metrics observed request by request, as prom-client does it. */
function direct() {
  const registry = new Registry();
  const requests = new Counter({
    name: NAMES[0]!,
    help: 'HTTP requests answered, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: NAMES[1]!,
    help: 'Time to answer an HTTP request, by method and route pattern.',
    labelNames: ['method', 'route'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return {
    registry,
    observe(method: string, route: string, status: number, seconds: number) {
      requests.inc({ method, route, status: String(status) });
      latency.observe({ method, route }, seconds);
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

const ROUNDS: Array<Array<[string, string, number, number]>> = [
  [
    ['GET', '/api/health', 200, 0.0004],
    ['GET', '/api/health', 200, 0.001],
    ['GET', '/api/health', 200, 0.0031],
    ['GET', '/api/health', 503, 12],
    ['POST', '/api/auth/sessions', 401, 0.02],
    ['GET', '(no route)', 404, 0.0002],
  ],
  [
    ['GET', '/api/health', 200, 0.7],
    ['POST', '/api/auth/sessions', 200, 0.051],
    ['DELETE', '/api/storage/buckets/:bucket', 204, 2.5],
  ],
];

describe('request metrics counted in plain numbers and folded at scrape', () => {
  it('expose the same counts, buckets and sums as observing each request', async () => {
    const metrics = new Metrics({}, { processMetrics: false });
    const expected = direct();
    for (const round of ROUNDS) {
      for (const [method, route, status, seconds] of round) {
        metrics.observeRequest(method, route, status, seconds);
        expected.observe(method, route, status, seconds);
      }
      // Scraped after each round: a fold adds only what came since the last one.
      const got = await text(metrics.registry);
      expect(got).toBe(await text(expected.registry));
      expect(got).toContain('plinth_http_requests_total{method="GET",route="/api/health",status="200"}');
    }
    // A scrape with nothing new changes nothing.
    expect(await text(metrics.registry)).toBe(await text(expected.registry));
    expect(await text(metrics.registry)).toContain(
      'plinth_http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/api/health"} 5',
    );
  });
});
