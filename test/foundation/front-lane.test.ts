// The front lane (src/http/front-lane.ts) answers GET and HEAD /api/health ahead of Fastify.
// The same requests go to a server with the lane and to one without it (Fastify answers
// everything): status, headers, body, Fastify's own request lines on stdout and the request
// metrics must be the same, the lane's answers are counted rather than stored a line each (the
// others' lines are the same), and the lane must really have answered (no Fastify hook ran). Requests the lane leaves to Fastify are compared too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { jsonLines, storedApiLine } from '../helpers/log.js';

interface Side {
  t: TestApp;
  stdout: Array<Record<string, any>>;
  /** Requests that reached Fastify's onRequest hooks, by URL. */
  fastify: string[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function side(frontLane: boolean, env: Record<string, string>): Promise<Side> {
  const { stream, lines } = jsonLines();
  const fastify: string[] = [];
  const t = await startApp(
    'embedded',
    { LOG_LEVEL: 'info', ...env },
    (app) =>
      app.addHook('onRequest', (request, _reply, done) => {
        fastify.push(`${request.method} ${request.url}`);
        done();
      }),
    stream,
    { frontLane },
  );
  return { t, stdout: lines, fastify };
}

/** What one answer is compared by: headers without Date, the timestamp and a generated request id made comparable. */
async function answer(s: Side, method: string, path: string, headers: Record<string, string>) {
  const r = await s.t.fetch(path, { method, headers });
  const text = await r.text();
  const h = Object.fromEntries(r.headers);
  delete h.date;
  if (!headers['x-request-id'] || headers['x-request-id'].includes(' ')) {
    expect(h['x-request-id']).toMatch(UUID);
    h['x-request-id'] = '(generated)';
  }
  return { status: r.status, headers: h, body: text.replace(/"timestamp":"[^"]+"/, '"timestamp":"(time)"') };
}

/** Fastify's request lines on stdout for one request id, without time and duration. */
function stdoutLines(s: Side, requestId: string) {
  return s.stdout
    .filter((l) => l.reqId === requestId)
    .map(({ time, responseTime, ...rest }) => {
      expect(typeof time).toBe('number');
      if (rest.msg === 'request completed') expect(typeof responseTime).toBe('number');
      return rest;
    });
}

/** The request metrics of /api/health routes: counts by method and status, and the histogram's count. */
async function healthMetrics(s: Side): Promise<string[]> {
  const { body } = await s.t.deps.metrics.scrape();
  return body
    .split('\n')
    .filter((l) => /^plinth_http_request(s_total|_duration_seconds_count)\{.*route="\/api\/health/.test(l))
    .sort();
}

const CASES: Array<{ name: string; method: string; path: string; headers?: Record<string, string>; lane: boolean }> = [
  { name: 'plain', method: 'GET', path: '/api/health', lane: true },
  {
    name: 'allowed origin',
    method: 'GET',
    path: '/api/health',
    headers: { origin: 'https://good.example' },
    lane: true,
  },
  {
    name: 'refused origin',
    method: 'GET',
    path: '/api/health',
    headers: { origin: 'https://evil.example' },
    lane: true,
  },
  { name: 'HEAD', method: 'HEAD', path: '/api/health', headers: { origin: 'https://good.example' }, lane: true },
  { name: 'bad request id', method: 'GET', path: '/api/health', headers: { 'x-request-id': 'bad id {x}' }, lane: true },
  { name: 'query string', method: 'GET', path: '/api/health?checks=false', lane: false },
  { name: 'trailing slash', method: 'GET', path: '/api/health/', lane: false },
  { name: 'POST', method: 'POST', path: '/api/health', lane: false },
  {
    name: 'preflight',
    method: 'OPTIONS',
    path: '/api/health',
    headers: { origin: 'https://good.example', 'access-control-request-method': 'GET' },
    lane: false,
  },
];

describe.each([
  ['any origin', {}],
  // Rate limits on: health is not limited (no X-RateLimit headers), with or without the lane.
  ['CORS_ORIGINS set, rate limits on', { CORS_ORIGINS: 'https://good.example', RATE_LIMIT_PLAN: 'free' }],
])('front lane (%s)', (_name, env: Record<string, string>) => {
  let lane: Side;
  let fastify: Side;

  beforeAll(async () => {
    [lane, fastify] = await Promise.all([side(true, env), side(false, env)]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([lane?.t.close(), fastify?.t.close()]);
  });

  it('answers as Fastify does: status, headers, body, log line, request lines and metrics', async () => {
    for (const [i, c] of CASES.entries()) {
      const headers = { 'x-request-id': `lane-${i}`, ...c.headers };
      const [a, b] = [await answer(lane, c.method, c.path, headers), await answer(fastify, c.method, c.path, headers)];
      expect(a, c.name).toEqual(b);
      // The lane's answers never reach Fastify's hooks; the others reach them as without it.
      const reached = (s: Side) => s.fastify.includes(`${c.method} ${c.path}`);
      expect(reached(lane), `${c.name}: reached Fastify`).toBe(c.lane ? false : reached(fastify));
      if (c.lane) expect(reached(fastify), `${c.name}: reached Fastify without the lane`).toBe(true);
      if (headers['x-request-id'].includes(' ')) continue;
      // The lane's answers are counted into one line a minute (test/logs/health-probes.test.ts), not stored each.
      const stored = await storedApiLine(lane.t, headers['x-request-id']);
      expect(await storedApiLine(fastify.t, headers['x-request-id']), `${c.name}: Fastify's log line`).not.toBeNull();
      if (c.lane) expect(stored, `${c.name}: log line`).toBeNull();
      else expect(stored, `${c.name}: log line`).toEqual(await storedApiLine(fastify.t, headers['x-request-id']));
      const out = stdoutLines(lane, headers['x-request-id']);
      expect(
        out.map((l) => l.msg),
        `${c.name}: request lines`,
      ).toEqual(['incoming request', 'request completed']);
      expect(out, `${c.name}: request lines`).toEqual(stdoutLines(fastify, headers['x-request-id']));
    }
    const metrics = await healthMetrics(lane);
    expect(metrics.some((l) => l.includes('method="HEAD"'))).toBe(true);
    expect(metrics).toEqual(await healthMetrics(fastify));
  });
});
