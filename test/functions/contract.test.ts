// Functions over HTTP: what a function gets and what it answers (/functions/{slug}), its logs, and its versions.
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { expectEnvelope, json, startFunctionsApp, type FunctionsApp } from './helpers.js';

describe.each(backends())('functions on %s', (backend) => {
  let t: TestApp;
  let admin: Record<string, string>;
  let create: FunctionsApp['create'];
  let update: FunctionsApp['update'];

  beforeAll(async () => {
    ({ t, admin, create, update } = await startFunctionsApp(backend));
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('code contract', () => {
    it('passes method, path, query, headers and a JSON body', async () => {
      const r = await t.fetch('/functions/echo/a/b?x=1&y=two', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-custom': 'yes', authorization: 'Bearer passthrough' },
        body: JSON.stringify({ hello: 'world', n: [1, 2] }),
      });
      expect(r.status).toBe(200);
      const b = await json(r);
      expect(b.method).toBe('POST');
      expect(b.path).toBe('/functions/echo/a/b');
      expect(b.query).toEqual({ x: '1', y: 'two' });
      expect(b.headers['x-custom']).toBe('yes');
      expect(b.headers.authorization).toBe('Bearer passthrough');
      expect(b.body).toEqual({ hello: 'world', n: [1, 2] });
    });

    it.each(['GET', 'PUT', 'PATCH', 'DELETE'])('runs %s', async (method) => {
      const withBody = method !== 'GET';
      const r = await t.fetch('/functions/echo?m=1', {
        method,
        headers: withBody ? { 'content-type': 'text/plain' } : {},
        body: withBody ? `text for ${method}` : undefined,
      });
      expect(r.status).toBe(200);
      const b = await json(r);
      expect(b.method).toBe(method);
      expect(b.body).toBe(withBody ? `text for ${method}` : null);
    });

    it('passes raw bytes of any content type unchanged, and bodies without a content type', async () => {
      await create({
        name: 'Hash',
        code: `export default async (req) => {
          const bytes = new Uint8Array(await req.arrayBuffer());
          const digest = await crypto.subtle.digest('SHA-256', bytes);
          return Response.json({ type: req.headers.get('content-type'), size: bytes.length,
            sha: [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('') });
        }`,
      });
      const bytes = randomBytes(3 * 1024 * 1024 + 17);
      const sha = createHash('sha256').update(bytes).digest('hex');
      for (const type of [
        'application/octet-stream',
        'image/png',
        'multipart/form-data; boundary=x',
        'application/json',
      ]) {
        const r = await t.fetch('/functions/hash', { method: 'POST', headers: { 'content-type': type }, body: bytes });
        expect(r.status).toBe(200);
        expect(await json(r)).toEqual({ type, size: bytes.length, sha });
      }
      const none = await t.fetch('/functions/hash', { method: 'PUT', body: new Uint8Array([1, 2, 3]) });
      expect((await json(none)).size).toBe(3);
    });

    it('streams a large body through the function and back', async () => {
      await create({
        name: 'Pipe',
        code: 'export default (req) => new Response(req.body, { headers: { "content-type": "application/octet-stream" } })',
      });
      const bytes = randomBytes(20 * 1024 * 1024);
      const r = await t.fetch('/functions/pipe', {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream' },
        body: bytes,
      });
      expect(r.status).toBe(200);
      const back = Buffer.from(await r.arrayBuffer());
      expect(back.length).toBe(bytes.length);
      expect(back.equals(bytes)).toBe(true);
    });

    it("returns the function's status, headers and streamed body unchanged", async () => {
      await create({
        name: 'Stream',
        code: `export default () => {
          const enc = new TextEncoder();
          let i = 0;
          const body = new ReadableStream({
            async pull(c) {
              if (i === 5) return c.close();
              await new Promise((r) => setTimeout(r, 20));
              c.enqueue(enc.encode('chunk' + i++ + '\\n'));
            },
          });
          const headers = new Headers({ 'content-type': 'text/x-custom', 'x-fn': 'yes' });
          headers.append('set-cookie', 'a=1');
          headers.append('set-cookie', 'b=2');
          return new Response(body, { status: 207, headers });
        }`,
      });
      const r = await t.fetch('/functions/stream');
      expect(r.status).toBe(207);
      expect(r.headers.get('content-type')).toBe('text/x-custom');
      expect(r.headers.get('x-fn')).toBe('yes');
      expect(r.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
      expect(await r.text()).toBe('chunk0\nchunk1\nchunk2\nchunk3\nchunk4\n');
    });

    it("cancels the function's stream when the client goes away", async () => {
      await create({
        name: 'Ticker',
        code: `export default () => {
          let timer;
          const body = new ReadableStream({
            start(c) { timer = setInterval(() => c.enqueue(new TextEncoder().encode('data: tick\\n\\n')), 20); },
            cancel() { clearInterval(timer); console.log('ticker cancelled'); },
          });
          return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
        }`,
      });
      const ac = new AbortController();
      const r = await t.fetch('/functions/ticker', { signal: ac.signal });
      expect(r.headers.get('content-type')).toBe('text/event-stream');
      const reader = r.body!.getReader();
      expect(new TextDecoder().decode((await reader.read()).value)).toContain('data: tick');
      ac.abort();
      let cancelled = false;
      for (let i = 0; i < 50 && !cancelled; i++) {
        await new Promise((res) => setTimeout(res, 100));
        const { logs } = await json(await t.fetch('/api/functions/ticker/logs', { headers: admin }));
        cancelled = logs.some((l: any) => l.message === 'ticker cancelled');
      }
      expect(cancelled).toBe(true);
    });

    it('keeps the warm process when a client abandons an upload', async () => {
      await create({
        name: 'Counter',
        code: 'let calls = 0; export default async (req) => { if (req.method === "POST") await req.text(); return new Response(String(++calls)); }',
      });
      expect(await (await t.fetch('/functions/counter')).text()).toBe('1');
      // Half a body, then the connection closes.
      const socket = connect(Number(new URL(t.url).port), '127.0.0.1');
      await once(socket, 'connect');
      socket.write('POST /functions/counter HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n\r\nhalf a body');
      await new Promise((res) => setTimeout(res, 200));
      socket.destroy();
      // Long enough for a process taken for dead to be stopped (the pool waits 300 ms for its exit).
      await new Promise((res) => setTimeout(res, 1000));
      // The same process answers: its count went on.
      expect(await (await t.fetch('/functions/counter')).text()).toBe('2');
    });

    it('lets the function pick error statuses, with no envelope around them', async () => {
      await create({ name: 'Teapot', code: 'export default () => new Response("short and stout", { status: 418 })' });
      const r = await t.fetch('/functions/teapot');
      expect(r.status).toBe(418);
      expect(await r.text()).toBe('short and stout');
    });

    it('answers 404 for missing, draft and error functions', async () => {
      await create({ name: 'Errored', code: 'export default () => new Response("x")' });
      await update('errored', { status: 'error' });
      for (const slug of ['no-such-function', 'errored']) {
        for (const method of ['GET', 'POST']) {
          const r = await t.fetch(`/functions/${slug}`, { method });
          expect(r.status).toBe(404);
          expectEnvelope(await json(r), 404, 'FUNCTION_NOT_FOUND');
        }
      }
    });

    it('answers 500 with the envelope (no stack) when the function throws, and logs the stack', async () => {
      await create({
        name: 'Thrower',
        code: [
          'interface Detail { text: string }',
          '// the function throws on line 5 of its source (line 3 once compiled)',
          'const detail: Detail = { text: "secret internal detail" };',
          'export default async () => {',
          '  throw new Error(detail.text);',
          '};',
        ].join('\n'),
      });
      const r = await t.fetch('/functions/thrower', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(r.status).toBe(500);
      const body = await json(r);
      expectEnvelope(body, 500, 'FUNCTION_ERROR');
      expect(JSON.stringify(body)).not.toContain('secret internal detail');
      const logs = await json(await t.fetch('/api/functions/thrower/logs', { headers: admin }));
      const stack = logs.logs.find(
        (l: any) => l.level === 'error' && l.message.includes('secret internal detail'),
      )?.message;
      // Modules are named by short names, not by the URLs they were loaded from.
      expect(stack).toMatch(/at .*function\.js:5:\d+/);
      expect(stack).not.toMatch(/data:|blob:|\.\.\.\.\.\./);
      // A module that fails while loading is a 500 too.
      await create({ name: 'Bad load', code: 'throw new Error("at load"); export default () => new Response("x")' });
      const bad = await t.fetch('/functions/bad-load');
      expect(bad.status).toBe(500);
      expectEnvelope(await json(bad), 500, 'FUNCTION_ERROR');
      // Returning something that is not a Response is the function's error.
      await create({ name: 'Not response', code: 'export default () => ({ hello: 1 })' });
      expect((await t.fetch('/functions/not-response')).status).toBe(500);
    });

    it('keeps console output readable by admins', async () => {
      await t.fetch('/functions/echo/logged?x=1');
      const r = await t.fetch('/api/functions/echo/logs?limit=1000', { headers: admin });
      expect(r.status).toBe(200);
      const { logs } = await json(r);
      expect(logs.some((l: any) => l.level === 'info' && l.message === 'called GET /functions/echo/logged')).toBe(true);
      expect(logs[0]).toEqual({
        id: expect.any(Number),
        timestamp: expect.any(String),
        level: expect.any(String),
        message: expect.any(String),
      });
      const times = logs.map((l: any) => Date.parse(l.timestamp));
      expect([...times].sort((a, b) => a - b)).toEqual(times);
      expect((await t.fetch('/api/functions/nope/logs', { headers: admin })).status).toBe(404);
    });

    it("runs no function code before the first call (the worker's warm-up call never reaches it)", async () => {
      await create({ name: 'Counted', code: 'let n = 0; export default () => new Response(String(++n))' });
      expect(await (await t.fetch('/functions/counted')).text()).toBe('1');
      expect(await (await t.fetch('/functions/counted')).text()).toBe('2');
    });

    it('replaces the warm worker when the code changes', async () => {
      await create({ name: 'Versioned', code: 'export default () => new Response("v1")' });
      expect(await (await t.fetch('/functions/versioned')).text()).toBe('v1');
      await update('versioned', { code: 'export default () => new Response("v2")' });
      expect(await (await t.fetch('/functions/versioned')).text()).toBe('v2');
    });

    it('serves the calls after a save with the module its check loaded, not a second load', async () => {
      await create({ name: 'Loaded once', code: 'export default () => new Response("v1")' });
      expect(await (await t.fetch('/functions/loaded-once')).text()).toBe('v1');
      const u = await update('loaded-once', {
        code: 'console.log("module loaded"); export default () => new Response("v2")',
      });
      expect(u.status).toBe(200);
      expect(await (await t.fetch('/functions/loaded-once')).text()).toBe('v2');
      expect(await (await t.fetch('/functions/loaded-once')).text()).toBe('v2');
      const { logs } = await json(await t.fetch('/api/functions/loaded-once/logs', { headers: admin }));
      expect(logs.filter((l: any) => l.message === 'module loaded')).toHaveLength(1);
    });

    it('gives functions saved and called at the same time their own processes', async () => {
      const names = ['twin-a', 'twin-b', 'twin-c'];
      await Promise.all(names.map((n) => create({ name: n, code: `export default () => new Response('${n}')` })));
      const answers = await Promise.all(names.map(async (n) => (await t.fetch(`/functions/${n}`)).text()));
      expect(answers).toEqual(names);
      const again = await Promise.all(names.map(async (n) => (await t.fetch(`/functions/${n}`)).text()));
      expect(again).toEqual(names);
    });

    it('lets calls in flight finish on the old code during a redeploy', async () => {
      await create({
        name: 'Slow',
        code: 'export default async () => { await new Promise((r) => setTimeout(r, 700)); return new Response("old"); }',
      });
      expect(await (await t.fetch('/functions/slow')).text()).toBe('old');
      const inFlight = t.fetch('/functions/slow');
      await new Promise((r) => setTimeout(r, 150));
      expect((await update('slow', { code: 'export default () => new Response("new")' })).status).toBe(200);
      expect(await (await t.fetch('/functions/slow')).text()).toBe('new');
      const first = await inFlight;
      expect(first.status).toBe(200);
      expect(await first.text()).toBe('old');
    });
  });
});
