// Function invocations and their console output in the log store (source functions), and the
// warm/cold and error counts in /metrics. A warm call answered over HTTP below 500 is counted
// into one line a minute (docs/logs.md); its request's api line is its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { startFunctionsApp, type FunctionsApp } from '../functions/helpers.js';
import { call } from '../helpers/http.js';

const CHATTY = `
export default async function (req: Request): Promise<Response> {
  console.log('hello from chatty');
  const q = new URL(req.url).searchParams;
  if (q.get('fail')) throw new Error('chatty failed on purpose');
  if (q.get('status')) return new Response('as asked', { status: Number(q.get('status')) });
  return new Response('ok');
}`;

describe.each(backends())('function logs and metrics (%s)', (backend) => {
  let f: FunctionsApp;

  beforeAll(async () => {
    f = await startFunctionsApp(backend);
    expect((await f.create({ name: 'Chatty', slug: 'chatty', code: CHATTY })).status).toBe(201);
    expect((await f.create({ name: 'Counted', slug: 'counted', code: CHATTY })).status).toBe(201);
  });
  afterAll(async () => {
    await f?.t.close();
  });

  // A secret's change loads each function anew at its next call: a cold start.
  const coldNext = async () => {
    const body = { value: String(Date.now()) };
    const put = await call(f.t, 'PUT', '/api/secrets/LOGS_TEST_SECRET', { headers: f.admin, body });
    expect(put.status).toBeLessThan(300);
  };

  const read = async (path: string) => {
    const page = await call(f.t, 'GET', path, { headers: { 'x-api-key': f.t.adminKey } });
    expect(page.status).toBe(200);
    return page.body.logs.reverse();
  };

  it('logs the cold call and the error a line each, counts the warm call, logs the console output', async () => {
    const { t } = f;
    await coldNext();
    for (const q of ['', '', '?fail=1']) await (await t.fetch(`/functions/chatty${q}`)).text();
    const lines = await read('/api/logs/functions?limit=50');
    const invoked = lines.filter((l: any) => l.body.slug === 'chatty');
    const own = invoked.filter((l: any) => l.body.count === undefined);
    expect(own.map((l: any) => [l.level, l.body.status, l.body.cold])).toEqual([
      ['info', 200, true],
      ['error', null, false],
    ]);
    expect(own[1].body.error).toBe('FUNCTION_ERROR');
    expect(own[0].body.durationMs).toBeGreaterThan(0);
    expect(typeof own[0].body.requestId).toBe('string');
    const countedLines = invoked.filter((l: any) => l.body.count !== undefined);
    expect(countedLines.map((l: any) => [l.level, l.body.count, l.body.cold])).toEqual([['info', 1, false]]);
    const consoleLines = lines.filter((l: any) => l.body.console && l.eventMessage.includes('hello from chatty'));
    expect(consoleLines.length).toBe(3);
    expect(consoleLines[0].body.functionId).toBe(own[0].body.functionId);

    const metrics = await (await t.fetch('/metrics', { headers: { 'x-api-key': t.adminKey } })).text();
    const count = (labels: string) =>
      Number(new RegExp(`^plinth_function_invocations_total\\{${labels}\\} (\\d+)`, 'm').exec(metrics)?.[1] ?? 0);
    expect(count('start="warm",outcome="ok"')).toBeGreaterThanOrEqual(1);
    expect(count('start="warm",outcome="error"') + count('start="cold",outcome="error"')).toBe(1);
  });

  it('stores N warm HTTP calls as one counted line of count N, a 500 a line of its own, the api lines each', async () => {
    const { t } = f;
    await coldNext();
    await (await t.fetch('/functions/counted')).text(); // the cold start: a line of its own
    const N = 12;
    const ids: string[] = [];
    for (let i = 0; i < N; i++) {
      ids.push(`counted-call-${i}-${Date.now()}`);
      const r = await t.fetch(`/functions/counted${i % 3 === 2 ? '?status=404' : ''}`, {
        headers: { 'x-request-id': ids[i]! },
      });
      await r.text();
    }
    await (await t.fetch('/functions/counted?status=500')).text();
    const invoked = (await read('/api/logs/functions?limit=200')).filter((l: any) => l.body.slug === 'counted');
    const countedLines = invoked.filter((l: any) => l.body.count !== undefined);
    // Calls that straddle a clock minute give two lines; together they count every call.
    expect(countedLines.length).toBeGreaterThanOrEqual(1);
    expect(countedLines.length).toBeLessThanOrEqual(2);
    expect(countedLines.reduce((n: number, l: any) => n + l.body.count, 0)).toBe(N);
    const last = countedLines.at(-1).body;
    expect(countedLines.at(-1).eventMessage).toMatch(/^invoked counted: \d+ calls answered \(one line a minute\)$/);
    expect(last).toMatchObject({ slug: 'counted', cold: false });
    expect(typeof last.durationMs).toBe('number');
    expect(last.maxMs).toBeGreaterThanOrEqual(last.durationMs);
    expect(last.lastRequestId).toBe(ids.at(-1));
    const statuses = countedLines.map((l: any) => l.body.statuses);
    expect(statuses.reduce((n: number, s: any) => n + s['2xx'], 0)).toBe(8);
    expect(statuses.reduce((n: number, s: any) => n + s['4xx'], 0)).toBe(4);
    const own = invoked.filter((l: any) => l.body.count === undefined);
    expect(own.map((l: any) => [l.level, l.body.status, l.body.cold])).toEqual([
      ['info', 200, true],
      ['error', 500, false],
    ]);

    const api = (await read('/api/logs/api?limit=1000')).filter((l: any) =>
      l.body.path?.startsWith('/functions/counted'),
    );
    expect(api.length).toBe(N + 2);
    expect(api.every((l: any) => l.body.route === '/functions/:slug' && l.body.count === undefined)).toBe(true);
    expect(ids.every((id) => api.some((l: any) => l.body.requestId === id))).toBe(true);
  });
});
