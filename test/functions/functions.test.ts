import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';

const ECHO = `
export default async function (req: Request): Promise<Response> {
  const url = new URL(req.url);
  const type = req.headers.get('content-type') ?? '';
  const body = req.method === 'GET' || req.method === 'HEAD' ? null
    : type.includes('json') ? await req.json()
    : await req.text();
  console.log('called', req.method, url.pathname);
  return Response.json({
    method: req.method,
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: Object.fromEntries(req.headers),
    body,
    env: { GREETING: Deno.env.get('GREETING') ?? null, HOME: Deno.env.get('HOME') ?? null },
  });
}`;

async function json(r: Response): Promise<any> {
  const text = await r.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`not JSON (${r.status}): ${text.slice(0, 300)}`);
  }
}

function expectEnvelope(body: any, status: number, code: string) {
  expect(body).toMatchObject({ statusCode: status, error: code });
  expect(typeof body.message).toBe('string');
  expect(typeof body.nextActions).toBe('string');
}

describe.each(backends())('functions on %s', (backend) => {
  let t: TestApp;
  let admin: Record<string, string>;

  const create = (body: Record<string, unknown>) =>
    t.fetch('/api/functions', { method: 'POST', headers: admin, body: JSON.stringify(body) });
  const update = (slug: string, body: Record<string, unknown>) =>
    t.fetch(`/api/functions/${slug}`, { method: 'PUT', headers: admin, body: JSON.stringify(body) });

  beforeAll(async () => {
    t = await startApp(backend);
    admin = { 'x-api-key': t.adminKey, 'content-type': 'application/json' };
    const r = await create({ name: 'Echo', code: ECHO, description: 'echoes the request' });
    expect(r.status).toBe(201);
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('administration', () => {
    it('creates with a slug made from the name, and returns the spec fields', async () => {
      const r = await create({ name: 'Send Welcome Email!', code: 'export default async () => new Response("hi")' });
      expect(r.status).toBe(201);
      const body = await json(r);
      expect(body.success).toBe(true);
      expect(body.function).toMatchObject({ slug: 'send-welcome-email', name: 'Send Welcome Email!', description: '', status: 'active' });
      expect(Object.keys(body.function).sort()).toEqual(
        ['code', 'created_at', 'deployed_at', 'description', 'id', 'name', 'slug', 'status', 'updated_at'].sort(),
      );
      expect(body.function.deployed_at).not.toBeNull();
    });

    it('keeps deployed_at null for a draft, sets it when activated', async () => {
      const r = await create({ name: 'Draft one', slug: 'draft-one', code: 'export default () => new Response("d")', status: 'draft' });
      const fn = (await json(r)).function;
      expect(fn.status).toBe('draft');
      expect(fn.deployed_at).toBeNull();
      expect((await t.fetch('/functions/draft-one')).status).toBe(404);
      const u = await json(await update('draft-one', { status: 'active' }));
      expect(u.function.status).toBe('active');
      expect(u.function.deployed_at).not.toBeNull();
      expect(await (await t.fetch('/functions/draft-one')).text()).toBe('d');
    });

    it('answers 409 on a taken slug', async () => {
      const r = await create({ name: 'Echo again', slug: 'echo', code: 'export default () => new Response("x")' });
      expect(r.status).toBe(409);
      expectEnvelope(await json(r), 409, 'ALREADY_EXISTS');
      const dup = await create({ name: 'Echo', code: 'export default () => new Response("x")' });
      expect(dup.status).toBe(409);
    });

    it('refuses a syntax error with line and column, storing nothing', async () => {
      const before = (await json(await t.fetch('/api/functions', { headers: admin }))).length;
      const r = await create({ name: 'Broken', code: 'export default async function (req) {\n  return new Response("x"\n}' });
      expect(r.status).toBe(400);
      const body = await json(r);
      expectEnvelope(body, 400, 'INVALID_CODE_SYNTAX');
      expect(body.message).toMatch(/line 3, column 1/);
      expect((await json(await t.fetch('/api/functions', { headers: admin }))).length).toBe(before);
      expect((await t.fetch('/api/functions/broken', { headers: admin })).status).toBe(404);
      // An update with broken code changes nothing either.
      const u = await update('echo', { code: 'export default (', name: 'Renamed' });
      expect(u.status).toBe(400);
      expect((await json(await t.fetch('/api/functions/echo', { headers: admin }))).name).toBe('Echo');
    });

    it('refuses code without a default export, and code over 1 MiB', async () => {
      const r = await create({ name: 'No default', code: 'export const x = 1;' });
      expect(r.status).toBe(400);
      expectEnvelope(await json(r), 400, 'INVALID_FUNCTION_CODE');
      const big = await create({ name: 'Big', code: `export default () => new Response("x");\n//${'x'.repeat(1024 * 1024)}` });
      expect(big.status).toBe(413);
      expectEnvelope(await json(big), 413, 'FUNCTION_CODE_TOO_LARGE');
    });

    it('refuses a default export that is not a function, storing nothing and keeping the live version', async () => {
      const before = (await json(await t.fetch('/api/functions', { headers: admin }))).length;
      for (const [code, kind] of [
        ['export default 42;', 'a number'],
        ['export default { fetch() {} };', 'an object'],
        ['const handler = undefined; export default handler;', 'undefined'],
      ]) {
        const r = await create({ name: 'Not a function', code });
        expect(r.status).toBe(400);
        const body = await json(r);
        expectEnvelope(body, 400, 'INVALID_FUNCTION_CODE');
        expect(body.message).toBe(`The default export is ${kind}; export a default function that takes a Request and returns a Response.`);
      }
      expect((await json(await t.fetch('/api/functions', { headers: admin }))).length).toBe(before);
      expect((await t.fetch('/api/functions/not-a-function', { headers: admin })).status).toBe(404);
      // An update with such code changes nothing: the previous version keeps answering.
      await create({ name: 'Live one', code: 'export default () => new Response("still v1")' });
      expect(await (await t.fetch('/functions/live-one')).text()).toBe('still v1');
      const u = await update('live-one', { code: 'export default "v2";', name: 'Renamed' });
      expect(u.status).toBe(400);
      expectEnvelope(await json(u), 400, 'INVALID_FUNCTION_CODE');
      const stored = await json(await t.fetch('/api/functions/live-one', { headers: admin }));
      expect(stored).toMatchObject({ name: 'Live one', code: 'export default () => new Response("still v1")' });
      expect(await (await t.fetch('/functions/live-one')).text()).toBe('still v1');
      // A draft is checked when it becomes active.
      await create({ name: 'Draft number', code: 'export default 7;', status: 'draft' });
      const activate = await update('draft-number', { status: 'active' });
      expect(activate.status).toBe(400);
      expectEnvelope(await json(activate), 400, 'INVALID_FUNCTION_CODE');
      expect((await json(await t.fetch('/api/functions/draft-number', { headers: admin }))).status).toBe('draft');
    });

    it.each<[Record<string, unknown>, string]>([
      [{ code: 'export default () => new Response("x")' }, 'name missing'],
      [{ name: 'x' }, 'code missing'],
      [{ name: 'x', code: 'export default () => new Response("x")', slug: 'Bad Slug' }, 'bad slug'],
      [{ name: 'x', code: 'export default () => new Response("x")', status: 'error' }, 'status error on create'],
      [{ name: 'x', code: 'export default () => new Response("x")', extra: 1 }, 'unknown field'],
      [{ name: '   ', code: 'export default () => new Response("x")' }, 'blank name'],
    ])('refuses %j (%s) with 400', async (body) => {
      const r = await create(body);
      expect(r.status).toBe(400);
      expectEnvelope(await json(r), 400, 'INVALID_INPUT');
    });

    it('lists without code and shows detail with code', async () => {
      const list = await json(await t.fetch('/api/functions', { headers: admin }));
      expect(Array.isArray(list)).toBe(true);
      const echo = list.find((f: any) => f.slug === 'echo');
      expect(echo).toBeDefined();
      expect(echo).not.toHaveProperty('code');
      const detail = await json(await t.fetch('/api/functions/echo', { headers: admin }));
      expect(detail.code).toBe(ECHO);
      expect(detail.description).toBe('echoes the request');
    });

    it('is for admins only', async () => {
      const user = await createTestUser(t);
      expect((await t.fetch('/api/functions')).status).toBe(401);
      expect((await t.fetch('/api/functions', { headers: user.auth })).status).toBe(403);
      expect((await t.fetch('/api/functions', { headers: { apikey: t.anonKey } })).status).toBe(403);
      expect((await t.fetch('/api/functions/echo/logs', { headers: user.auth })).status).toBe(403);
      expect((await t.fetch('/api/secrets', { headers: user.auth })).status).toBe(403);
    });

    it('deletes, then the function is gone everywhere', async () => {
      await create({ name: 'Short lived', code: 'export default () => new Response("alive")' });
      expect((await t.fetch('/functions/short-lived')).status).toBe(200);
      const r = await t.fetch('/api/functions/short-lived', { method: 'DELETE', headers: { 'x-api-key': t.adminKey } });
      expect(r.status).toBe(200);
      expect(await json(r)).toMatchObject({ success: true, message: expect.any(String) });
      expect((await t.fetch('/api/functions/short-lived', { headers: admin })).status).toBe(404);
      const gone = await t.fetch('/functions/short-lived');
      expect(gone.status).toBe(404);
      expectEnvelope(await json(gone), 404, 'FUNCTION_NOT_FOUND');
      expect((await t.fetch('/api/functions/short-lived', { method: 'DELETE', headers: { 'x-api-key': t.adminKey } })).status).toBe(404);
    });
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
      for (const type of ['application/octet-stream', 'image/png', 'multipart/form-data; boundary=x', 'application/json']) {
        const r = await t.fetch('/functions/hash', { method: 'POST', headers: { 'content-type': type }, body: bytes });
        expect(r.status).toBe(200);
        expect(await json(r)).toEqual({ type, size: bytes.length, sha });
      }
      const none = await t.fetch('/functions/hash', { method: 'PUT', body: new Uint8Array([1, 2, 3]) });
      expect((await json(none)).size).toBe(3);
    });

    it('streams a large body through the function and back', async () => {
      await create({ name: 'Pipe', code: 'export default (req) => new Response(req.body, { headers: { "content-type": "application/octet-stream" } })' });
      const bytes = randomBytes(20 * 1024 * 1024);
      const r = await t.fetch('/functions/pipe', { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: bytes });
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

    it('cancels the function\'s stream when the client goes away', async () => {
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
      const r = await t.fetch('/functions/thrower', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(r.status).toBe(500);
      const body = await json(r);
      expectEnvelope(body, 500, 'FUNCTION_ERROR');
      expect(JSON.stringify(body)).not.toContain('secret internal detail');
      const logs = await json(await t.fetch('/api/functions/thrower/logs', { headers: admin }));
      const stack = logs.logs.find((l: any) => l.level === 'error' && l.message.includes('secret internal detail'))?.message;
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
      expect(logs[0]).toEqual({ timestamp: expect.any(String), level: expect.any(String), message: expect.any(String) });
      const times = logs.map((l: any) => Date.parse(l.timestamp));
      expect([...times].sort((a, b) => a - b)).toEqual(times);
      expect((await t.fetch('/api/functions/nope/logs', { headers: admin })).status).toBe(404);
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
      const u = await update('loaded-once', { code: 'console.log("module loaded"); export default () => new Response("v2")' });
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
      await create({ name: 'Slow', code: 'export default async () => { await new Promise((r) => setTimeout(r, 700)); return new Response("old"); }' });
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

  describe('calling through /api/functions/{slug}', () => {
    it('needs a credential and tells the function who called; client identity headers are stripped', async () => {
      const spoof = { 'x-plinth-user-id': 'spoofed', 'x-plinth-role': 'admin', 'content-type': 'application/json' };
      const none = await t.fetch('/api/functions/echo', { method: 'POST', headers: spoof, body: '{}' });
      expect(none.status).toBe(401);
      const user = await createTestUser(t);
      const r = await t.fetch('/api/functions/echo?q=1', { method: 'POST', headers: { ...spoof, ...user.auth }, body: '{"a":1}' });
      expect(r.status).toBe(200);
      const b = await json(r);
      expect(b.headers['x-plinth-user-id']).toBe(user.userId);
      expect(b.headers['x-plinth-user-email']).toBe(user.email);
      expect(b.headers['x-plinth-role']).toBe('authenticated');
      expect(b.body).toEqual({ a: 1 });
      expect(b.query).toEqual({ q: '1' });
      const anon = await json(await t.fetch('/api/functions/echo', { method: 'POST', headers: { ...spoof, apikey: t.anonKey }, body: '{}' }));
      expect(anon.headers['x-plinth-role']).toBe('anon');
      expect(anon.headers['x-plinth-user-id']).toBeUndefined();
      const adm = await json(await t.fetch('/api/functions/echo', { method: 'POST', headers: { ...spoof, 'x-api-key': t.adminKey }, body: '{}' }));
      expect(adm.headers['x-plinth-role']).toBe('admin');
      // The admin key never reaches the function, in any header or on any path; a user's token does.
      expect(adm.headers['x-api-key']).toBeUndefined();
      expect(b.headers.authorization).toBe(user.auth.authorization);
      for (const [path, headers] of [
        ['/api/functions/echo', { authorization: `Bearer ${t.adminKey}` }],
        ['/api/functions/echo', { apikey: t.adminKey }],
        ['/functions/echo', { 'x-api-key': t.adminKey, authorization: `bearer ${t.adminKey}` }],
      ] as const) {
        const seen = await json(await t.fetch(path, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{}' }));
        expect(JSON.stringify(seen.headers)).not.toContain(t.adminKey);
      }
      // The open path strips them too.
      const open = await json(await t.fetch('/functions/echo', { headers: { 'x-plinth-user-id': 'spoofed', 'x-plinth-role': 'admin' } }));
      expect(open.headers['x-plinth-user-id']).toBeUndefined();
      expect(open.headers['x-plinth-role']).toBeUndefined();
    });
  });

  describe('secrets', () => {
    it('creates, masks, hands to functions, replaces workers on change, deletes', async () => {
      const value = 'hello-from-a-secret-value';
      const put = await t.fetch('/api/secrets/GREETING', { method: 'PUT', headers: admin, body: JSON.stringify({ value }) });
      expect(put.status).toBe(201);
      const putBody = await put.text();
      expect(putBody).not.toContain(value);
      expect(JSON.parse(putBody)).toMatchObject({ success: true, secret: { name: 'GREETING', preview: expect.any(String) } });
      const list = await t.fetch('/api/secrets', { headers: admin });
      const listText = await list.text();
      expect(listText).not.toContain(value);
      expect(JSON.parse(listText).map((s: any) => s.name)).toContain('GREETING');
      expect(await (await t.fetch('/api/secrets/GREETING', { headers: admin })).text()).not.toContain(value);

      const env = (await json(await t.fetch('/functions/echo'))).env;
      expect(env).toEqual({ GREETING: value, HOME: null });

      const again = await t.fetch('/api/secrets/GREETING', { method: 'PUT', headers: admin, body: JSON.stringify({ value: 'changed' }) });
      expect(again.status).toBe(200);
      expect((await json(await t.fetch('/functions/echo'))).env.GREETING).toBe('changed');

      const del = await t.fetch('/api/secrets/GREETING', { method: 'DELETE', headers: { 'x-api-key': t.adminKey } });
      expect(del.status).toBe(200);
      expect((await json(await t.fetch('/functions/echo'))).env.GREETING).toBeNull();
      const missing = await t.fetch('/api/secrets/GREETING', { method: 'DELETE', headers: { 'x-api-key': t.adminKey } });
      expect(missing.status).toBe(404);
      expectEnvelope(await json(missing), 404, 'SECRET_NOT_FOUND');
      expect((await t.fetch('/api/secrets/GREETING', { headers: admin })).status).toBe(404);
    });

    it('limits a scoped secret to the functions it names', async () => {
      for (const name of ['Env A', 'Env B']) await create({ name, code: 'export default () => Response.json(Deno.env.toObject())' });
      const put = await t.fetch('/api/secrets/ONLY_B', { method: 'PUT', headers: admin, body: JSON.stringify({ value: 'for-b-only', functions: ['env-b'] }) });
      expect(put.status).toBe(201);
      expect((await json(put)).secret.functions).toEqual(['env-b']);
      await t.fetch('/api/secrets/SHARED', { method: 'PUT', headers: admin, body: JSON.stringify({ value: 'for-everyone' }) });
      const a = await json(await t.fetch('/functions/env-a'));
      const b = await json(await t.fetch('/functions/env-b'));
      expect(a.ONLY_B).toBeUndefined();
      expect(a.SHARED).toBe('for-everyone');
      expect(b.ONLY_B).toBe('for-b-only');
      expect(b.SHARED).toBe('for-everyone');
      // Widening the scope reaches the other function on its next call.
      await t.fetch('/api/secrets/ONLY_B', { method: 'PUT', headers: admin, body: JSON.stringify({ value: 'now-shared', functions: null }) });
      expect((await json(await t.fetch('/functions/env-a'))).ONLY_B).toBe('now-shared');
      const bad = await t.fetch('/api/secrets/X', { method: 'PUT', headers: admin, body: JSON.stringify({ value: 'v', functions: ['Not A Slug'] }) });
      expect(bad.status).toBe(400);
      for (const n of ['ONLY_B', 'SHARED']) await t.fetch(`/api/secrets/${n}`, { method: 'DELETE', headers: { 'x-api-key': t.adminKey } });
    });

    it.each(['1ABC', 'has-dash', 'a'.repeat(129)])('refuses the name %s', async (name) => {
      const r = await t.fetch(`/api/secrets/${name}`, { method: 'PUT', headers: admin, body: JSON.stringify({ value: 'x' }) });
      expect(r.status).toBe(400);
    });
  });
});

describe('function runtime unreachable', () => {
  it('answers 502 with the envelope when FUNCTION_RUNTIME_URL does not answer', async () => {
    const t = await startApp('pglite', { FUNCTION_RUNTIME_URL: 'http://127.0.0.1:9' });
    try {
      const admin = { 'x-api-key': t.adminKey, 'content-type': 'application/json' };
      const c = await t.fetch('/api/functions', { method: 'POST', headers: admin, body: JSON.stringify({ name: 'Remote', code: 'export default () => new Response("x")' }) });
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
