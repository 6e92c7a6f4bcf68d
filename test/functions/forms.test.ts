// The forms real apps write a function in (docs/functions.md, "Forms a function may take"), each
// saved and called as its own function through real HTTP: InsForge's `handler` export and script
// form (module.exports, encodeBase64/decodeBase64 in scope), Supabase's Deno.serve with its
// types-only import and EdgeRuntime.waitUntil, and the variables every function sees (ANON_KEY,
// INSFORGE_BASE_URL). The SDK inside a function: forms-sdk.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { call } from '../helpers/http.js';
import { until } from '../helpers/until.js';
import { expectEnvelope } from './helpers.js';

const HANDLER = `
export async function handler(req: Request): Promise<Response> {
  return Response.json({ form: 'handler', method: req.method });
}`;

const BOTH = `
export default () => Response.json({ form: 'default' });
export const handler = () => Response.json({ form: 'handler' });`;

// InsForge's script form: no import or export; the base64 helpers in scope.
const SCRIPT = `
module.exports = async function (request) {
  const { text } = await request.json();
  const b64 = encodeBase64(text);
  const bytes = encodeBase64(new TextEncoder().encode(text).buffer);
  return new Response(JSON.stringify({ b64, bytes, back: new TextDecoder().decode(decodeBase64(b64)) }), {
    headers: { 'content-type': 'application/json' },
  });
};`;

const SCRIPT_EXPORTS = `
exports.handler = async (request) => new Response('via exports.handler: ' + new URL(request.url).pathname);`;

// Supabase's form, as its templates write it.
const SERVE = `
import "jsr:@supabase/functions-js/edge-runtime.d.ts";

Deno.serve(async (req) => {
  const { name } = await req.json();
  return new Response(JSON.stringify({ message: \`Hello \${name}!\` }), { headers: { "Content-Type": "application/json" } });
});`;

const SERVE_OPTIONS = `
const server = Deno.serve({ port: 8000 }, (req: Request) => new Response('options first: ' + req.method + ' ' + server.addr.port));`;

const SERVE_HANDLER_OPTION = `Deno.serve({ handler: () => new Response('handler option') });`;

const ENV = `
export default async function (req: Request): Promise<Response> {
  const base = Deno.env.get('INSFORGE_BASE_URL');
  const anonKey = Deno.env.get('ANON_KEY');
  // The anon key is this instance's: the records API takes it.
  const r = await fetch(base + '/api/database/records/visible', { headers: { authorization: 'Bearer ' + anonKey } });
  return Response.json({ base, anonKey, secret: Deno.env.get('APP_SECRET') ?? null, status: r.status, rows: await r.json() });
}`;

// Answers at once; the work after the response ends when a later call releases it, or fails.
const WAIT_UNTIL = `
let release: (() => void) | null = null;
Deno.serve(async (req) => {
  const { action } = await req.json();
  if (action === 'release') {
    release?.();
    return new Response('released');
  }
  if (action === 'fail') EdgeRuntime.waitUntil(Promise.reject(new Error('background boom')));
  else EdgeRuntime.waitUntil(new Promise<void>((r) => (release = r)).then(() => console.log('background done')));
  return new Response('answered');
});`;

// Work that never ends: stopped at the time limit.
const FOREVER = `
export default () => {
  EdgeRuntime.waitUntil((async () => {
    for (;;) {
      console.log('tick');
      await new Promise((r) => setTimeout(r, 100));
    }
  })());
  return new Response('started');
};`;

describe.each(backends())('the forms of a function (%s)', (backend) => {
  let t: TestApp;
  const admin = () => ({ 'x-api-key': t.adminKey });
  const save = async (slug: string, code: string) => {
    const r = await call(t, 'POST', '/api/functions', { headers: admin(), body: { name: slug, slug, code } });
    expect(r.status, r.text).toBe(201);
  };
  const logs = async (slug: string): Promise<string[]> =>
    (await call(t, 'GET', `/api/functions/${slug}/logs`, { headers: admin() })).body.logs.map(
      (l: { message: string }) => l.message,
    );

  beforeAll(async () => {
    t = await startApp(backend);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('export async function handler: InsForge takes default ?? handler', async () => {
    await save('handler-form', HANDLER);
    expect(await call(t, 'PUT', '/functions/handler-form')).toMatchObject({
      status: 200,
      body: { form: 'handler', method: 'PUT' },
    });
    await save('both-forms', BOTH);
    expect((await call(t, 'GET', '/functions/both-forms')).body).toEqual({ form: 'default' });
  });

  it('the script form, module.exports = async function (request), with encodeBase64 and decodeBase64 in scope', async () => {
    await save('script-form', SCRIPT);
    const r = await call(t, 'POST', '/functions/script-form', { body: { text: 'héllo ✓' } });
    const b64 = Buffer.from('héllo ✓').toString('base64');
    expect(r).toMatchObject({ status: 200, body: { b64, bytes: b64, back: 'héllo ✓' } });
    await save('script-exports', SCRIPT_EXPORTS);
    expect((await call(t, 'GET', '/functions/script-exports/x')).text).toBe(
      'via exports.handler: /functions/script-exports/x',
    );
  });

  it('Deno.serve((req) => ...) with the types-only edge-runtime.d.ts import, and its other signatures', async () => {
    await save('serve-form', SERVE);
    expect(await call(t, 'POST', '/functions/serve-form', { body: { name: 'Functions' } })).toMatchObject({
      status: 200,
      body: { message: 'Hello Functions!' },
    });
    await save('serve-options', SERVE_OPTIONS);
    expect((await call(t, 'DELETE', '/functions/serve-options')).text).toBe('options first: DELETE 8000');
    await save('serve-handler-option', SERVE_HANDLER_OPTION);
    expect((await call(t, 'GET', '/functions/serve-handler-option')).text).toBe('handler option');
  });

  it('sees INSFORGE_BASE_URL and ANON_KEY (the anon key of this instance) beside its secrets', async () => {
    await t.deps.db.query(`create table public.visible (id int primary key)`);
    await t.deps.db.query(`insert into public.visible values (1)`);
    await t.deps.db.query(`grant select on public.visible to anon`);
    const put = await call(t, 'PUT', '/api/secrets/APP_SECRET', { headers: admin(), body: { value: 's3cret' } });
    expect(put.status).toBe(201);
    await save('env-form', ENV);
    const r = await call(t, 'GET', '/functions/env-form');
    expect(r.body).toEqual({
      base: `http://localhost:${new URL(t.url).port}`,
      anonKey: t.anonKey,
      secret: 's3cret',
      status: 200,
      rows: [{ id: 1 }],
    });
  });

  it('refuses code with no entry, naming every form; a script whose module.exports is no function', async () => {
    for (const code of ['console.log("no entry")', 'export const helper = () => 1;']) {
      const r = await call(t, 'POST', '/api/functions', { headers: admin(), body: { name: 'no-entry', code } });
      expectEnvelope(r.body, 400, 'INVALID_FUNCTION_CODE');
      expect(r.body.message).toMatch(/export default.*handler.*module\.exports.*Deno\.serve/);
    }
    const obj = await call(t, 'POST', '/api/functions', {
      headers: admin(),
      body: { name: 'object-exports', code: 'module.exports = { answer: 42 };' },
    });
    expectEnvelope(obj.body, 400, 'INVALID_FUNCTION_CODE');
    expect(obj.body.message).toBe(
      'module.exports is an object; assign it a function that takes a Request and returns a Response.',
    );
    expect((await call(t, 'GET', '/functions/object-exports')).status).toBe(404);
  });

  it('EdgeRuntime.waitUntil: the work goes on after the response; its error is in the logs', async () => {
    await save('wait-until', WAIT_UNTIL);
    const r = await call(t, 'POST', '/functions/wait-until', { body: { action: 'start' } });
    // The answer came while the work waits for the release.
    expect([r.status, r.text]).toEqual([200, 'answered']);
    await new Promise((done) => setTimeout(done, 300));
    expect(await logs('wait-until')).not.toContain('background done');
    expect((await call(t, 'POST', '/functions/wait-until', { body: { action: 'release' } })).text).toBe('released');
    await until(async () => (await logs('wait-until')).includes('background done'), 10_000, 'the work');
    expect((await call(t, 'POST', '/functions/wait-until', { body: { action: 'fail' } })).text).toBe('answered');
    await until(
      async () => (await logs('wait-until')).some((m) => /^EdgeRuntime\.waitUntil: Error: background boom/.test(m)),
      10_000,
      'the error',
    );
  });
});

// A time limit of its own (5 s): the work of waitUntil still running then is stopped.
describe.each(backends())('EdgeRuntime.waitUntil at the time limit (%s)', (backend) => {
  let t: TestApp;
  const admin = () => ({ 'x-api-key': t.adminKey });
  const logs = async (slug: string): Promise<string[]> =>
    (await call(t, 'GET', `/api/functions/${slug}/logs`, { headers: admin() })).body.logs.map(
      (l: { message: string }) => l.message,
    );
  beforeAll(async () => {
    t = await startApp(backend, { FUNCTION_TIMEOUT_MS: '5000' });
    const r = await call(t, 'POST', '/api/functions', { headers: admin(), body: { name: 'forever', code: FOREVER } });
    expect(r.status, r.text).toBe(201);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('EdgeRuntime.waitUntil: work still running at the time limit is stopped; the next call starts afresh', async () => {
    const id = (await call(t, 'GET', '/api/functions/forever', { headers: admin() })).body.id as string;
    const pool = t.deps.functions.runtime as unknown as { pidOf(id: string): number | null };
    expect((await call(t, 'GET', '/functions/forever')).text).toBe('started');
    const pid = pool.pidOf(id);
    expect(pid).not.toBeNull();
    await until(
      async () =>
        (await logs('forever')).some((m) => /waitUntil was still running at the time limit \(5000 ms\)/.test(m)),
      15_000,
      'the stop',
    );
    await new Promise((r) => setTimeout(r, 500));
    const ticks = (await logs('forever')).filter((m) => m === 'tick').length;
    expect(ticks).toBeGreaterThan(10);
    await new Promise((r) => setTimeout(r, 800));
    expect((await logs('forever')).filter((m) => m === 'tick').length).toBe(ticks);
    expect(pool.pidOf(id)).not.toBe(pid);
    expect((await call(t, 'GET', '/functions/forever')).text).toBe('started');
    expect(pool.pidOf(id)).not.toBe(pid);
  });
});
