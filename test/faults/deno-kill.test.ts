// The Deno process of a function SIGKILLed while calls are in flight: those calls answer a
// 502 envelope, and the next calls succeed on a new process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostPool } from '../../src/functions/runtime/pool.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';

describe('the Deno runtime killed with SIGKILL', () => {
  let t: TestApp;
  let admin: Record<string, string>;
  beforeAll(async () => {
    t = await startApp();
    admin = { 'x-api-key': t.adminKey, 'content-type': 'application/json' };
    // ?wait=ms holds the call; ?count tells how many calls are being held.
    const code = `let held = 0;
    export default async (req) => {
      const q = new URL(req.url).searchParams;
      if (q.has('count')) return Response.json({ held });
      const wait = Number(q.get('wait') ?? 0);
      held++;
      if (wait) await new Promise((r) => setTimeout(r, wait));
      held--;
      return Response.json({ pid: Deno.pid });
    }`;
    const r = await t.fetch('/api/functions', {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ name: 'slowpoke', code }),
    });
    expect(r.status).toBe(201);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers 502 to the calls in flight and serves the next calls from a new process', async () => {
    const first = await t.fetch('/functions/slowpoke');
    expect(first.status).toBe(200);
    const { pid } = await first.json();
    const id = (await (await t.fetch('/api/functions/slowpoke', { headers: admin })).json()).id as string;
    expect((t.deps.functions.runtime as HostPool).pidOf(id)).toBe(pid);

    // Calls that would take 30 s: all in flight when the process dies.
    const started = Date.now();
    const inFlight = Array.from({ length: 4 }, () =>
      t.fetch('/functions/slowpoke?wait=30000', { signal: AbortSignal.timeout(20_000) }),
    );
    await until(
      async () => (await (await t.fetch('/functions/slowpoke?count')).json()).held === 4,
      10_000,
      'the calls to reach the function',
    );
    process.kill(pid, 'SIGKILL');
    const answers = await Promise.all(inFlight);
    for (const r of answers) {
      expect(r.status).toBe(502);
      expect(await r.json()).toMatchObject({
        statusCode: 502,
        error: 'FUNCTION_RUNTIME_UNAVAILABLE',
        nextActions: expect.any(String),
      });
    }
    // Answered at once, not at the call timeout.
    expect(Date.now() - started).toBeLessThan(15_000);

    // The next call starts a new process and succeeds.
    let next = 0;
    await until(
      async () => {
        const r = await t.fetch('/functions/slowpoke');
        if (r.status !== 200) return false;
        next = (await r.json()).pid;
        return true;
      },
      20_000,
      'a call to succeed again',
    );
    expect(next).not.toBe(pid);
    const again = await Promise.all(Array.from({ length: 5 }, () => t.fetch('/functions/slowpoke')));
    expect(again.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
  }, 60_000);
});
