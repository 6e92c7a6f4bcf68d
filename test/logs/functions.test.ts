// Function invocations and their console output in the log store (source functions), and the
// warm/cold and error counts in /metrics.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { startFunctionsApp, type FunctionsApp } from '../functions/helpers.js';
import { call } from '../helpers/http.js';

const CHATTY = `
export default async function (req: Request): Promise<Response> {
  console.log('hello from chatty');
  if (new URL(req.url).searchParams.get('fail')) throw new Error('chatty failed on purpose');
  return new Response('ok');
}`;

describe.each(backends())('function logs and metrics (%s)', (backend) => {
  let f: FunctionsApp;

  beforeAll(async () => {
    f = await startFunctionsApp(backend);
    expect((await f.create({ name: 'Chatty', slug: 'chatty', code: CHATTY })).status).toBe(201);
  });
  afterAll(async () => {
    await f?.t.close();
  });

  it('logs each invocation (cold, then warm) with the console output, and counts them', async () => {
    const { t } = f;
    for (const q of ['', '', '?fail=1']) await (await t.fetch(`/functions/chatty${q}`)).text();
    const page = await call(t, 'GET', '/api/logs/functions?limit=50', { headers: { 'x-api-key': t.adminKey } });
    expect(page.status).toBe(200);
    const lines = page.body.logs.reverse();
    const invoked = lines.filter((l: any) => l.body.slug === 'chatty');
    expect(invoked.map((l: any) => [l.level, l.body.status])).toEqual([
      ['info', 200],
      ['info', 200],
      ['error', null],
    ]);
    expect(invoked[2].body.error).toBe('FUNCTION_ERROR');
    expect(invoked[1].body.cold).toBe(false);
    expect(invoked[0].body.durationMs).toBeGreaterThan(0);
    const consoleLines = lines.filter((l: any) => l.body.console && l.eventMessage.includes('hello from chatty'));
    expect(consoleLines.length).toBe(3);
    expect(consoleLines[0].body.functionId).toBe(invoked[0].body.functionId);

    const metrics = await (await t.fetch('/metrics', { headers: { 'x-api-key': t.adminKey } })).text();
    const count = (labels: string) =>
      Number(new RegExp(`^plinth_function_invocations_total\\{${labels}\\} (\\d+)`, 'm').exec(metrics)?.[1] ?? 0);
    expect(count('start="warm",outcome="ok"')).toBeGreaterThanOrEqual(1);
    expect(count('start="warm",outcome="error"') + count('start="cold",outcome="error"')).toBe(1);
  });
});
