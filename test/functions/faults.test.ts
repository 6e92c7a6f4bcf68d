import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostPool } from '../../src/functions/runtime/pool.js';
import { startApp, type TestApp } from '../helpers/app.js';

// Functions that answer with something Plinth cannot relay as it is: each is the function's
// fault (FUNCTION_ERROR and a line in its logs), never the server's or the runtime's.
describe('responses a function gets wrong', () => {
  let t: TestApp;
  let admin: Record<string, string>;
  const serverLog: Array<{ level: number; msg?: string; reqId?: string; code?: string; err?: { type?: string } }> = [];

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split('\n')) if (line) serverLog.push(JSON.parse(line));
        done();
      },
    });
    t = await startApp('embedded', { LOG_LEVEL: 'info' }, undefined, sink);
    admin = { 'x-api-key': t.adminKey, 'content-type': 'application/json' };
  });
  afterAll(async () => {
    await t?.close();
  });

  const deploy = async (slug: string, code: string) => {
    const r = await t.fetch('/api/functions', {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ name: slug, code }),
    });
    expect(r.status).toBe(201);
    return (await r.json()).function.id as string;
  };
  const logLines = async (slug: string): Promise<string[]> =>
    (await (await t.fetch(`/api/functions/${slug}/logs`, { headers: admin })).json()).logs.map(
      (l: { message: string }) => l.message,
    );
  const pid = (id: string) => (t.deps.functions.runtime as HostPool).pidOf(id);
  // Transport errors of the relay logged as the server's own failures.
  const transportErrors = () =>
    serverLog.filter((l) => l.msg === 'unhandled error' || /SocketError|HeadersOverflowError/.test(l.err?.type ?? ''));

  const expectFunctionError = async (r: Response) => {
    expect(r.status).toBe(500);
    expect(await r.json()).toMatchObject({ statusCode: 500, error: 'FUNCTION_ERROR' });
  };

  it('answers FUNCTION_ERROR, never a 101, when the function returns status 101', async () => {
    const id = await deploy(
      'switching',
      'export default async function () { return new Response(null, { status: 101 }); }',
    );
    // The signal only ends the test if the answer never comes (the bug: 101 and then nothing).
    const r = await t.fetch('/functions/switching', { signal: AbortSignal.timeout(10_000) });
    await expectFunctionError(r);
    expect(await logLines('switching')).toContain(
      'The function returned status 101; a function must answer with a status from 200 to 599.',
    );
    // The function's fault: a warning in the server log, not an error.
    const reqId = r.headers.get('x-request-id');
    expect(serverLog.filter((l) => l.reqId === reqId && l.level >= 40)).toEqual([
      expect.objectContaining({ level: 40, code: 'FUNCTION_ERROR' }),
    ]);
    const first = pid(id);
    expect((await t.fetch('/functions/switching')).status).toBe(500);
    expect(pid(id)).toBe(first);
  });

  it('answers FUNCTION_ERROR for response headers over 16 KiB, keeping the process', async () => {
    const id = await deploy(
      'big-header',
      'export default (req) => new URL(req.url).searchParams.has("small") ? new Response("ok") : new Response("x", { headers: { "x-big": "a".repeat(200 * 1024) } })',
    );
    await expectFunctionError(await t.fetch('/functions/big-header'));
    expect(await logLines('big-header')).toContain("The function's response headers are larger than 16 KiB.");
    const first = pid(id);
    expect(await (await t.fetch('/functions/big-header?small')).text()).toBe('ok');
    expect(pid(id)).toBe(first);
    expect(transportErrors()).toEqual([]);
  });

  it('answers FUNCTION_ERROR when the body fails before its first byte, keeping the process', async () => {
    const id = await deploy(
      'body-fails-early',
      `export default (req) => new URL(req.url).searchParams.has("ok") ? new Response("fine")
        : new Response(new ReadableStream({ start(c) { c.error(new Error("no body today")); } }))`,
    );
    await expectFunctionError(await t.fetch('/functions/body-fails-early'));
    expect(await logLines('body-fails-early')).toContain(
      "The function's response body failed part-way (its stream threw an error or was aborted).",
    );
    const first = pid(id);
    expect(await (await t.fetch('/functions/body-fails-early?ok')).text()).toBe('fine');
    expect(pid(id)).toBe(first);
    expect(transportErrors()).toEqual([]);
  });

  it('cuts a response whose body fails part-way, without a server error, keeping the process', async () => {
    const id = await deploy(
      'body-fails-late',
      `let calls = 0;
      export default (req) => {
        calls++;
        if (new URL(req.url).searchParams.has("count")) return new Response(String(calls));
        let sent = false;
        return new Response(new ReadableStream({
          async pull(c) {
            if (sent) return c.error(new Error("broke half-way"));
            sent = true;
            c.enqueue(new TextEncoder().encode("first part"));
          },
        }));
      }`,
    );
    const r = await t.fetch('/functions/body-fails-late');
    expect(r.status).toBe(200);
    await expect(r.text()).rejects.toThrow();
    expect(await logLines('body-fails-late')).toContain(
      "The function's response body failed part-way (its stream threw an error or was aborted).",
    );
    const first = pid(id);
    // The same process answers: its count went on.
    expect(await (await t.fetch('/functions/body-fails-late?count')).text()).toBe('2');
    expect(pid(id)).toBe(first);
    expect(transportErrors()).toEqual([]);
  });
});
