// A function calls the Plinth it runs in at Deno.env.get('PLINTH_URL') (the runtime's bridge, a
// Unix socket relayed to Plinth's own HTTP server): the records API with its caller's token (RLS
// applies), POST /api/email/send-raw with its own token (the mail reaches a real SMTP server),
// Plinth's normal auth on every bridged request; loopback and Plinth's own port stay refused.
import { statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { at, call } from '../helpers/http.js';
import { until } from '../helpers/until.js';
import { startSmtp } from '../auth/smtp.js';
import { sql } from '../database/helpers.js';
import { ECHO, json } from './helpers.js';

/** Fetches PLINTH_URL + the `path` query parameter with the headers of the `send` JSON body; answers what came back. */
const RELAY = `
export default async function (req: Request): Promise<Response> {
  const ask = await req.json();
  const base = Deno.env.get('PLINTH_URL');
  const init: RequestInit = { method: ask.method ?? 'GET', headers: ask.headers ?? {} };
  if (ask.forwardAuth) (init.headers as Record<string, string>).authorization = req.headers.get('authorization') ?? '';
  if (ask.functionToken) (init.headers as Record<string, string>).authorization = 'Bearer ' + req.headers.get('x-plinth-function-token');
  if (ask.body !== undefined) init.body = JSON.stringify(ask.body);
  const r = ask.asRequest ? await fetch(new Request(base + ask.path, init)) : await fetch(base + ask.path, init);
  return Response.json({ base, sdkBase: Deno.env.get('INSFORGE_BASE_URL'), status: r.status, body: await r.text() });
}`;

/** Tries PLINTH_URL and each URL (fetch) and host:port (Deno.connect) in the body; answers what each did. */
const PROBE = `
export default async function (req: Request): Promise<Response> {
  const { urls, connects } = await req.json();
  const out: Record<string, string> = {};
  for (const u of [Deno.env.get('PLINTH_URL') + '/api/health', ...urls]) {
    try { out[u] = 'reached ' + (await fetch(u)).status; } catch (e) { out[u] = (e as Error).name; }
  }
  for (const [hostname, port] of connects) {
    try { (await Deno.connect({ hostname, port })).close(); out[hostname + ':' + port] = 'connected'; } catch (e) { out[hostname + ':' + port] = (e as Error).name; }
  }
  return Response.json(out);
}`;

describe.each(backends())('a function calls its Plinth through the bridge (%s)', (backend) => {
  let t: TestApp;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let other: Server;
  let port: number;
  const admin = () => ({ 'x-api-key': t.adminKey });
  const relay = async (ask: Record<string, unknown>, headers: Record<string, string> = {}) => {
    const r = await t.fetch('/functions/relay', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(ask),
    });
    expect(r.status).toBe(200);
    const out = await json(r);
    let body: any = out.body;
    try {
      body = JSON.parse(out.body);
    } catch {
      // not JSON
    }
    return { ...out, body };
  };

  beforeAll(async () => {
    smtp = await startSmtp();
    t = await startApp(backend, { SMTP_URL: smtp.url, MAIL_FROM: 'App <app@example.com>' });
    port = Number(new URL(t.url).port);
    other = createServer((_q, s) => s.end('another service'));
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    for (const [slug, code] of [
      ['relay', RELAY],
      ['probe', PROBE],
      ['echo', ECHO],
    ]) {
      const r = await call(t, 'POST', '/api/functions', { headers: admin(), body: { name: slug, slug, code } });
      expect(r.status, r.text).toBe(201);
    }
    await sql(
      t,
      `create table public.notes (id serial primary key, owner uuid not null default auth.uid(), body text not null)`,
    );
    await sql(t, `grant select, insert on public.notes to authenticated`);
    await sql(t, `grant usage on all sequences in schema public to authenticated`);
    await sql(t, `alter table public.notes enable row level security`);
    await sql(
      t,
      `create policy own on public.notes for all to authenticated using (owner = auth.uid()) with check (owner = auth.uid())`,
    );
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
    await new Promise((r) => other?.close(r));
  });

  it('sees PLINTH_URL and INSFORGE_BASE_URL: http://localhost:<port> without PUBLIC_URL', async () => {
    const out = await relay({ path: '/api/health' });
    expect(out).toMatchObject({
      base: `http://localhost:${port}`,
      sdkBase: `http://localhost:${port}`,
      status: 200,
      body: { status: 'ok' },
    });
  });

  it("keeps the bridge socket its owner's alone: the socket 0600 in a 0700 dir", () => {
    const socket = (t.deps.functions.runtime as unknown as { bridge: { socketPath: string } }).bridge.socketPath;
    expect(statSync(socket).isSocket()).toBe(true);
    expect(statSync(socket).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(socket)).mode & 0o777).toBe(0o700);
  });

  it("reads a table through the records API with its caller's token: RLS shows each user their rows", async () => {
    const a = await createTestUser(t);
    const b = await createTestUser(t);
    expect(
      (await call(t, 'POST', '/api/database/records/notes', { token: a.token, body: [{ body: 'a1' }, { body: 'a2' }] }))
        .status,
    ).toBe(201);
    expect(
      (await call(t, 'POST', '/api/database/records/notes', { token: b.token, body: [{ body: 'b1' }] })).status,
    ).toBe(201);
    const ask = { path: '/api/database/records/notes?order=body.asc', forwardAuth: true };
    const asA = await relay(ask, a.auth);
    expect([asA.status, asA.body.map((n: any) => n.body)]).toEqual([200, ['a1', 'a2']]);
    const asB = await relay({ ...ask, asRequest: true }, b.auth);
    expect([asB.status, asB.body.map((n: any) => n.body)]).toEqual([200, ['b1']]);
    // A write through the bridge, as the caller: the row is theirs.
    const wrote = await relay(
      {
        path: '/api/database/records/notes',
        method: 'POST',
        forwardAuth: true,
        headers: { 'content-type': 'application/json', prefer: 'return=representation' },
        body: [{ body: 'b2' }],
      },
      b.auth,
    );
    expect(wrote.status).toBe(201);
    const { rows } = await sql(t, `select owner::text from public.notes where body = 'b2'`);
    expect(rows).toEqual([{ owner: b.userId }]);
  });

  it('gets no more rights than its request carries: x-plinth-* and forwarding headers count for nothing', async () => {
    const headers = {
      'x-plinth-role': 'admin',
      'x-plinth-user-id': '00000000-0000-0000-0000-000000000000',
      'x-forwarded-for': '203.0.113.9',
    };
    const none = await relay({ path: '/api/database/records/notes', headers });
    expect([none.status, none.body.error]).toEqual([401, 'UNAUTHORIZED']);
    const secrets = await relay({ path: '/api/secrets', headers });
    expect(secrets.status).toBe(401);
    // Calling a function through the bridge: the server says who called, not the caller.
    const echoed = await relay({ path: '/functions/echo', headers });
    expect(echoed.body.headers).toMatchObject({ 'x-plinth-role': 'anon', host: `localhost:${port}` });
    expect(echoed.body.headers['x-plinth-user-id']).toBeUndefined();
    expect(echoed.body.headers['x-forwarded-for']).toBeUndefined();
    // The admin key a client sends never reaches the function, so it cannot call as the admin.
    const viaAdmin = await relay(
      { path: '/api/secrets', forwardAuth: true },
      { authorization: `Bearer ${t.adminKey}` },
    );
    expect(viaAdmin.status).toBe(401);
  });

  it('sends mail with POST /api/email/send-raw and its own token; the mail reaches the SMTP server', async () => {
    const out = await relay({
      path: '/api/email/send-raw',
      method: 'POST',
      functionToken: true,
      headers: { 'content-type': 'application/json' },
      body: { to: 'bridge@example.com', subject: 'Through the bridge', text: 'hello from a function' },
    });
    expect([out.status, out.body]).toEqual([200, {}]);
    await until(async () => smtp.count('bridge@example.com') === 1, 10_000, 'the mail');
    expect(smtp.mails.find((m) => m.to.includes('bridge@example.com'))!.raw).toMatch(/Subject: Through the bridge/);
  });

  it("reaches PLINTH_URL but still not loopback: another port, 127.0.0.1 at Plinth's own port, localhost under another port", async () => {
    const otherPort = (other.address() as { port: number }).port;
    expect((await call(at(`http://127.0.0.1:${otherPort}`), 'GET', '/')).text).toBe('another service');
    const urls = [
      `http://127.0.0.1:${otherPort}/`,
      `http://localhost:${otherPort}/`,
      `http://127.0.0.1:${port}/api/health`,
      `http://[::1]:${port}/api/health`,
    ];
    const r = await t.fetch('/functions/probe', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        urls,
        connects: [
          ['127.0.0.1', port],
          ['localhost', port],
          ['127.0.0.1', otherPort],
        ],
      }),
    });
    const out = await json(r);
    expect(out).toEqual({
      [`http://localhost:${port}/api/health`]: 'reached 200',
      [urls[0]!]: 'NotCapable',
      [urls[1]!]: 'NotCapable',
      [urls[2]!]: 'NotCapable',
      [urls[3]!]: 'NotCapable',
      [`127.0.0.1:${port}`]: 'NotCapable',
      [`localhost:${port}`]: 'NotCapable',
      [`127.0.0.1:${otherPort}`]: 'NotCapable',
    });
  });
});

describe('with PUBLIC_URL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp('embedded', { PUBLIC_URL: 'https://api.example.com' });
    expect(
      (
        await call(t, 'POST', '/api/functions', {
          headers: { 'x-api-key': t.adminKey },
          body: { name: 'relay', code: RELAY },
        })
      ).status,
    ).toBe(201);
  });
  afterAll(async () => t?.close());

  it('PLINTH_URL is PUBLIC_URL, and fetches of its origin go through the bridge, not the network', async () => {
    const r = await t.fetch('/functions/relay', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ path: '/api/health' }),
    });
    const out = await json(r);
    expect(out).toMatchObject({ base: 'https://api.example.com', sdkBase: 'https://api.example.com', status: 200 });
    expect(JSON.parse(out.body)).toMatchObject({ status: 'ok' });
  });
});
