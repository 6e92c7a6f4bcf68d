// GET /metrics scraped and read with a real Prometheus text-format parser: who may scrape,
// and the values that move after requests (HTTP, pool, storage bytes, realtime, functions'
// absence, the job queue hook, the log writer).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error no type declarations: it returns the prom2json shape
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { backends } from '../helpers/db.js';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { connectSocket } from '../helpers/realtime.js';

const TOKEN = 'metrics-token-0123456789abcdef';

interface Family {
  name: string;
  type: string;
  metrics: Array<{
    value?: string;
    labels?: Record<string, string>;
    count?: string;
    sum?: string;
    buckets?: Record<string, string>;
  }>;
}

describe.each(backends())('metrics (%s)', (backend) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp(backend, { METRICS_TOKEN: TOKEN });
  });
  afterAll(async () => {
    await t?.close();
  });

  let lastText = '';
  async function scrape(): Promise<Map<string, Family>> {
    const r = await t.fetch('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    lastText = await r.text();
    const families: Family[] = parsePrometheusTextFormat(lastText);
    return new Map(families.map((f) => [f.name, f]));
  }
  /**
   * One label set of a histogram, parsed on its own: the parser (like prom2json) folds the
   * series of a histogram into one by `le`, so it reads one label set at a time.
   */
  const histogram = (name: string, match: string) =>
    (
      parsePrometheusTextFormat(
        lastText
          .split('\n')
          .filter(
            (l) =>
              l.startsWith(`# HELP ${name} `) ||
              l.startsWith(`# TYPE ${name} `) ||
              (l.startsWith(name) && l.includes(match)),
          )
          .join('\n'),
      ) as Family[]
    )[0]!;
  const sample = (m: Map<string, Family>, name: string, labels: Record<string, string> = {}) =>
    m.get(name)?.metrics.find((s) => Object.entries(labels).every(([k, v]) => s.labels?.[k] === v));
  const value = (m: Map<string, Family>, name: string, labels: Record<string, string> = {}) =>
    Number(sample(m, name, labels)?.value ?? 0);

  it('is refused without the admin key or the metrics token, with the envelope', async () => {
    for (const headers of <Array<Record<string, string>>>[
      {},
      { authorization: 'Bearer wrong-token-0123456789' },
      { apikey: t.anonKey },
      { 'x-api-key': 'ik_nope' },
    ]) {
      const r = await t.fetch('/metrics', { headers });
      expect(r.status).toBe(401);
      expect(await r.json()).toMatchObject({ statusCode: 401, error: 'METRICS_UNAUTHORIZED' });
    }
    const user = await createTestUser(t);
    expect((await t.fetch('/metrics', { headers: user.auth })).status).toBe(401);
    expect((await t.fetch('/metrics', { headers: { 'x-api-key': t.adminKey } })).status).toBe(200);
  });

  it('counts requests by route and status and observes their latency', async () => {
    const before = await scrape();
    const labels = { method: 'GET', route: '/api/health', status: '200' };
    for (let i = 0; i < 3; i++) await t.fetch('/api/health');
    await t.fetch('/api/database/records/missing', { headers: { 'x-api-key': t.adminKey } });
    const after = await scrape();
    expect(
      value(after, 'plinth_http_requests_total', labels) - value(before, 'plinth_http_requests_total', labels),
    ).toBe(3);
    expect(
      value(after, 'plinth_http_requests_total', { route: '/api/database/records/:table', status: '404' }),
    ).toBeGreaterThanOrEqual(1);
    expect(after.get('plinth_http_request_duration_seconds')!.type).toBe('HISTOGRAM');
    const h = histogram('plinth_http_request_duration_seconds', 'method="GET",route="/api/health"');
    expect(Number(h.metrics[0]!.buckets!['+Inf'])).toBeGreaterThanOrEqual(3);
    expect(Number(h.metrics[0]!.buckets!['0.001'])).toBeLessThanOrEqual(Number(h.metrics[0]!.buckets!['+Inf']));
  });

  it('reports the database pool, storage bytes, realtime sockets and deliveries', async () => {
    const admin = { 'x-api-key': t.adminKey };
    expect(
      (
        await call(t, 'POST', '/api/storage/buckets', {
          headers: admin,
          body: { bucketName: 'metrics', isPublic: false },
        })
      ).status,
    ).toBeLessThan(300);
    const before = await scrape();
    const up = await t.fetch('/api/storage/buckets/metrics/objects/a.txt', {
      method: 'PUT',
      headers: { ...admin, 'content-type': 'application/octet-stream' },
      body: 'x'.repeat(1000),
    });
    expect(up.status).toBeLessThan(300);
    const down = await t.fetch('/api/storage/buckets/metrics/objects/a.txt', { headers: admin });
    expect((await down.text()).length).toBe(1000);
    const user = await createTestUser(t);
    // A read as a user runs in a transaction of its own (RLS): one pool acquire at least.
    expect(
      (
        await call(t, 'POST', '/api/database/tables', {
          headers: admin,
          body: { tableName: 'm', columns: [{ name: 'n', type: 'integer', nullable: true }] },
        })
      ).status,
    ).toBe(201);
    expect((await call(t, 'GET', '/api/database/records/m', { token: user.token })).status).toBe(200);
    const socket = await connectSocket(t.url, user.token);
    await t.deps.logs.flush();
    try {
      const after = await scrape();
      expect(
        value(after, 'plinth_storage_bytes_total', { direction: 'out' }) -
          value(before, 'plinth_storage_bytes_total', { direction: 'out' }),
      ).toBeGreaterThanOrEqual(1000);
      expect(value(after, 'plinth_realtime_sockets')).toBe(1);
      expect(value(after, 'plinth_db_pool_connections', { state: 'total' })).toBeGreaterThan(0);
      expect(value(after, 'plinth_db_pool_acquires_total')).toBeGreaterThan(
        value(before, 'plinth_db_pool_acquires_total'),
      );
      expect(after.has('plinth_db_pool_wait_seconds_total')).toBe(true);
      expect(after.has('plinth_realtime_deliveries_total')).toBe(true);
      expect(after.has('plinth_function_invocations_total')).toBe(true);
      expect(after.has('plinth_ai_tokens_total')).toBe(true);
      expect(value(after, 'plinth_logs_written_total')).toBeGreaterThan(0);
      expect(after.has('process_cpu_seconds_total')).toBe(true);
    } finally {
      socket.disconnect();
    }
  });

  it('reads the job queue depth by queue from the jobs area (pg-boss), and from any hook set', async () => {
    await t.deps.jobs!.queue('metrics-probe'); // a queue no worker takes from: its jobs wait
    await t.deps.jobs!.send('metrics-probe', { n: 1 });
    await t.deps.jobs!.send('metrics-probe', { n: 2 });
    expect(value(await scrape(), 'plinth_job_queue_depth', { queue: 'metrics-probe' })).toBe(2);
    t.deps.metrics.setJobQueueDepth(async () => ({ default: 4, emails: 2 }));
    const m = await scrape();
    expect(value(m, 'plinth_job_queue_depth', { queue: 'default' })).toBe(4);
    expect(value(m, 'plinth_job_queue_depth', { queue: 'emails' })).toBe(2);
    t.deps.metrics.setJobQueueDepth(null);
    expect(sample(await scrape(), 'plinth_job_queue_depth')).toBeUndefined();
  });
});
