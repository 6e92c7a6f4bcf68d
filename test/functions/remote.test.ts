import type { AddressInfo } from 'node:net';
import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { at, call } from '../helpers/http.js';
import { denoBinary } from '../../src/functions/runtime/deno.js';
import { HostPool } from '../../src/functions/runtime/pool.js';
import { createRuntimeServer } from '../../src/functions/runtime/server.js';
import { expectEnvelope, json } from './helpers.js';

const TOKEN = 'runtime-token-0123456789abcdef';

// Plinth with FUNCTION_RUNTIME_URL pointing at a standalone runtime (the same host pool).
describe('remote function runtime (FUNCTION_RUNTIME_URL)', () => {
  let pool: HostPool;
  let server: http.Server;
  let runtimeUrl: string;
  let t: TestApp;
  let admin: Record<string, string>;
  const lines: string[] = [];

  beforeAll(async () => {
    pool = new HostPool({
      binary: denoBinary(),
      memoryMb: 64,
      timeoutMs: 3000,
      onLog: (_id, _level, message) => lines.push(message),
    });
    server = createRuntimeServer(pool, TOKEN);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    runtimeUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    t = await startApp('embedded', {
      FUNCTION_RUNTIME_URL: runtimeUrl,
      FUNCTION_RUNTIME_TOKEN: TOKEN,
      FUNCTION_TIMEOUT_MS: '3000',
    });
    admin = { 'x-api-key': t.adminKey, 'content-type': 'application/json' };
  });
  afterAll(async () => {
    await t?.close();
    server?.close();
    await pool?.close();
  });

  const deploy = async (name: string, code: string) => {
    const r = await t.fetch('/api/functions', { method: 'POST', headers: admin, body: JSON.stringify({ name, code }) });
    expect(r.status).toBe(201);
  };

  it('runs functions there, with bodies, statuses and secrets', async () => {
    await t.fetch('/api/secrets/REMOTE_SECRET', {
      method: 'PUT',
      headers: admin,
      body: JSON.stringify({ value: 'far-away' }),
    });
    await deploy(
      'Remote echo',
      `export default async (req) => { console.log('remote log line'); return new Response(JSON.stringify({ body: await req.text(), env: Deno.env.get('REMOTE_SECRET') }), { status: 202 }); }`,
    );
    const r = await t.fetch('/functions/remote-echo', {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'over the wire',
    });
    expect(r.status).toBe(202);
    expect(await r.json()).toEqual({ body: 'over the wire', env: 'far-away' });
    expect(lines).toContain('remote log line');
    const health = await t.fetch('/api/health?checks=true');
    expect((await health.json()).checks.functions.status).toBe('ok');
  });

  it('maps thrown errors and timeouts to 500 and 504', async () => {
    await deploy('Remote thrower', 'export default () => { throw new Error("x"); }');
    const r = await t.fetch('/functions/remote-thrower');
    expect(r.status).toBe(500);
    expect((await r.json()).error).toBe('FUNCTION_ERROR');
    await deploy('Remote spin', 'export default () => { while (true) {} }');
    const s = await t.fetch('/functions/remote-spin');
    expect(s.status).toBe(504);
    expect((await s.json()).error).toBe('FUNCTION_TIMEOUT');
  });

  it('refuses a default export that is not a function when saved, keeping the live version', async () => {
    const c = await t.fetch('/api/functions', {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ name: 'Remote number', code: 'export default 42;' }),
    });
    expect(c.status).toBe(400);
    expect(await c.json()).toMatchObject({
      error: 'INVALID_FUNCTION_CODE',
      message: 'The default export is a number; export a default function that takes a Request and returns a Response.',
    });
    expect((await t.fetch('/api/functions/remote-number', { headers: admin })).status).toBe(404);
    await deploy('Remote live', 'export default () => new Response("live")');
    expect(await (await t.fetch('/functions/remote-live')).text()).toBe('live');
    const u = await t.fetch('/api/functions/remote-live', {
      method: 'PUT',
      headers: admin,
      body: JSON.stringify({ code: 'export default null;' }),
    });
    expect(u.status).toBe(400);
    expect((await u.json()).error).toBe('INVALID_FUNCTION_CODE');
    expect(await (await t.fetch('/functions/remote-live')).text()).toBe('live');
  });

  it('maps a status of 101 and a body failing before its first byte to FUNCTION_ERROR', async () => {
    await deploy('Remote switching', 'export default () => new Response(null, { status: 101 })');
    const r = await t.fetch('/functions/remote-switching', { signal: AbortSignal.timeout(10_000) });
    expect(r.status).toBe(500);
    expect((await r.json()).error).toBe('FUNCTION_ERROR');
    expect(lines).toContain('The function returned status 101; a function must answer with a status from 200 to 599.');
    await deploy(
      'Remote body fails',
      'export default () => new Response(new ReadableStream({ start(c) { c.error(new Error("no body")); } }))',
    );
    const b = await t.fetch('/functions/remote-body-fails');
    expect(b.status).toBe(500);
    expect((await b.json()).error).toBe('FUNCTION_ERROR');
  });

  it('redeploys when the runtime lost the function, and refuses calls without the token', async () => {
    await deploy('Remote again', 'export default () => new Response("again")');
    expect(await (await t.fetch('/functions/remote-again')).text()).toBe('again');
    // A fresh runtime on the same address knows no function: Plinth deploys it again.
    const port = (server.address() as AddressInfo).port;
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    server = createRuntimeServer(pool, TOKEN);
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
    const again = await t.fetch('/functions/remote-again');
    expect(again.status).toBe(200);
    expect(await again.text()).toBe('again');
    // Without the token the runtime answers nothing useful.
    const direct = await call(at(runtimeUrl), 'GET', '/_plinth/health');
    expect(direct.status).toBe(401);
  });
});

describe('function runtime unreachable', () => {
  it('answers 502 with the envelope when FUNCTION_RUNTIME_URL does not answer', async () => {
    const t = await startApp('embedded', { FUNCTION_RUNTIME_URL: 'http://127.0.0.1:9' });
    try {
      const admin = { 'x-api-key': t.adminKey, 'content-type': 'application/json' };
      const c = await t.fetch('/api/functions', {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ name: 'Remote', code: 'export default () => new Response("x")' }),
      });
      expect(c.status).toBe(201);
      const r = await t.fetch('/functions/remote');
      expect(r.status).toBe(502);
      expectEnvelope(await json(r), 502, 'FUNCTION_RUNTIME_UNAVAILABLE');
      const health = await t.fetch('/api/health?checks=true');
      expect(health.status).toBe(503);
      expect((await json(health)).checks.functions.status).toBe('down');
      expect((await t.fetch('/functions/missing')).status).toBe(404);
    } finally {
      await t.close();
    }
  });
});
