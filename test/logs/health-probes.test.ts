// Health probes answered by the front lane are counted, not stored a line each (docs/logs.md):
// N probes make one `api` line with count N, a read of the logs stores what was counted so far,
// shutdown keeps the count, and other health answers (a query string, a 503 while draining)
// keep their own line. The metrics still count every probe.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

const probeLines = async (t: TestApp, requestIds: string[] = []) => {
  const page = await t.deps.logs.read({ sources: ['api'], limit: 1000 });
  return {
    counted: page.logs.filter((l) => l.body.route === '/api/health' && typeof l.body.count === 'number'),
    own: page.logs.filter((l) => requestIds.includes(String(l.body.requestId))),
  };
};

/** Probes counted in one clock minute make one line: a test waits when the minute is about to end. */
const awayFromMinuteEnd = async () => {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 5000) await new Promise((r) => setTimeout(r, left + 50));
};

const probes = async (t: TestApp, n: number, prefix: string, method = 'GET') => {
  for (let i = 0; i < n; i++) {
    const r = await t.fetch('/api/health', { method, headers: { 'x-request-id': `${prefix}-${i}` } });
    expect(r.status).toBe(200);
    await r.arrayBuffer();
  }
};

describe('health probes in the log store', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp('embedded');
  }, 120_000);
  afterAll(() => t?.close());

  it('stores N probes as one line with count N; other requests keep their own line', async () => {
    await awayFromMinuteEnd();
    const start = Date.now();
    await probes(t, 25, 'probe');
    await probes(t, 3, 'head', 'HEAD');
    const other = await t.fetch('/api/health?checks=true', { headers: { 'x-request-id': 'with-checks' } });
    expect(other.status).toBe(200);
    const { counted, own } = await probeLines(t, ['probe-0', 'probe-24', 'head-0', 'with-checks']);
    // Only the request Fastify answered has a line of its own.
    expect(own.map((l) => l.body.requestId)).toEqual(['with-checks']);
    const byMethod = Object.fromEntries(counted.map((l) => [l.body.method, l]));
    expect(counted).toHaveLength(2);
    const get = byMethod.GET!;
    expect(get.level).toBe('info');
    expect(get.eventMessage).toBe('GET /api/health 200: 25 probes answered (one line a minute)');
    expect(get.body).toMatchObject({
      method: 'GET',
      route: '/api/health',
      path: '/api/health',
      status: 200,
      count: 25,
      caller: 'none',
      lastRequestId: 'probe-24',
      ips: ['127.0.0.1'],
    });
    const { durationMs, p99Ms, maxMs, from, to } = get.body as Record<string, any>;
    expect(durationMs).toBeGreaterThan(0);
    expect(p99Ms).toBeGreaterThanOrEqual(durationMs);
    expect(maxMs).toBeGreaterThanOrEqual(p99Ms);
    expect(Date.parse(from)).toBeGreaterThanOrEqual(start - 1);
    expect(Date.parse(to)).toBeGreaterThanOrEqual(Date.parse(from));
    expect(Date.parse(get.timestamp)).toBe(Date.parse(to));
    expect(byMethod.HEAD!.body).toMatchObject({ method: 'HEAD', count: 3, lastRequestId: 'head-2' });
    // The stats count every probe, not the line.
    const stats = await t.deps.logs.stats({ route: '/api/health', from: new Date(start - 60_000).toISOString() });
    const gets = stats.filter((s) => s.method === 'GET').reduce((n, s) => n + s.count, 0);
    expect(gets).toBe(26);
  });

  it('stores later probes in a new line, and nothing twice', async () => {
    await awayFromMinuteEnd();
    await probes(t, 4, 'later');
    const { counted } = await probeLines(t);
    const get = counted.filter((l) => l.body.method === 'GET');
    expect(get.map((l) => l.body.count)).toEqual([4, 25]);
    expect((await probeLines(t)).counted).toHaveLength(3);
  });

  it('counts every probe in the metrics', async () => {
    const { body } = await t.deps.metrics.scrape();
    const line = body
      .split('\n')
      .find((l) => /^plinth_http_requests_total\{.*method="GET".*route="\/api\/health".*status="200"/.test(l));
    // 29 probes and the request with checks.
    expect(line?.split(' ').pop()).toBe('30');
  });
});

/** A client on one kept-alive connection: `get` sends a request and resolves with its raw answer. */
function connection(url: string) {
  const socket = net.connect(Number(new URL(url).port), '127.0.0.1');
  let data = '';
  let waiting: (() => void) | null = null;
  socket.on('data', (d) => {
    data += d;
    waiting?.();
  });
  return {
    get(path: string, id: string): Promise<string> {
      data = '';
      socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nX-Request-Id: ${id}\r\n\r\n`);
      // Health answers are small: one chunk with the whole body.
      return new Promise((resolve) => {
        waiting = () => /\r\n\r\n\{.*\}$/s.test(data) && resolve(data);
      });
    },
    close: () => socket.destroy(),
  };
}

describe('health probes at shutdown', () => {
  it('keeps the count when the server shuts down, and a 503 while draining is its own line', async () => {
    // A long drain grace: the idle connection stays open for the probe sent while draining.
    const t = await startApp('embedded', {}, undefined, undefined, { drainGraceMs: 2000 });
    const conn = connection(t.url);
    try {
      await awayFromMinuteEnd();
      await probes(t, 6, 'before-close');
      expect(await conn.get('/api/health', 'on-the-connection')).toMatch(/^HTTP\/1.1 200/);
      const closing = t.app.close();
      await new Promise((r) => setTimeout(r, 50));
      const answer = await conn.get('/api/health', 'while-draining');
      expect(answer).toMatch(/^HTTP\/1.1 503/);
      expect(answer).toMatch(/connection: close/i);
      await closing;
      // The log store closes at shutdown (deps.close, before the database): it stores what was counted.
      await t.deps.logs.close();
      const rows = await t.deps.db.query<{ message: string; fields: string }>(
        `select message, fields::text from system.logs where source = 'api' order by id`,
      );
      const lines = rows.rows.map((r) => ({ message: r.message, fields: JSON.parse(r.fields) }));
      expect(lines.filter((l) => l.fields.count !== undefined).map((l) => l.fields.count)).toEqual([7]);
      const draining = lines.find((l) => l.fields.requestId === 'while-draining');
      expect(draining).toMatchObject({ message: 'GET /api/health 503', fields: { status: 503, route: '/api/health' } });
    } finally {
      conn.close();
      await t.close().catch(() => {});
    }
  }, 120_000);
});
