// Function calls in the front lane (src/http/lanes/functions.ts). The same requests go to a
// server with the lane and to one without it (Fastify answers everything), as
// front-lane.test.ts does for health: status, headers, body, the stored `api` line, Fastify's
// request lines on stdout and the request metrics must be the same, and the lane must really
// have answered (no Fastify onRequest hook ran). Requests the lane leaves to Fastify are
// compared too, and must reach Fastify. Rate limits are on: the lane counts in the same budget
// as Fastify's routes, to the same 429.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FunctionLane } from '../../src/http/lanes/functions.js';
import type { LaneKit } from '../../src/http/front-lane.js';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { jsonLines, storedApiLine } from '../helpers/log.js';

interface Side {
  t: TestApp;
  stdout: Array<Record<string, any>>;
  /** Requests that reached Fastify's onRequest hooks. */
  fastify: string[];
  /** This side's own values (keys, token, port), replaced by names so that the sides compare. */
  own: Array<[string, string]>;
  auth: { user: string; anon: string; admin: string };
}

const EMAIL = 'lane-caller@example.com';
const FUNCTIONS: Record<string, string> = {
  echo: `export default async (req) => {
    const url = new URL(req.url);
    const headers = Object.fromEntries([...req.headers].filter(([k]) => k !== 'x-plinth-function-token'));
    const body = req.method === 'GET' ? null : await req.text();
    return Response.json({ method: req.method, url: url.href, headers, body });
  }`,
  nobody: `export default () => new Response(null, { status: 204, headers: { 'x-fn': 'yes' } })`,
  bytes: `export default () => new Response(new Uint8Array([1, 2, 3]), { status: 201 })`,
  badtype: `export default () => new Response('x', { headers: { 'content-type': 'nonsense' } })`,
  big: `export default () => new Response('y'.repeat(100000), { headers: { 'content-type': 'text/plain' } })`,
  stream: `export default () => {
    let i = 0;
    const body = new ReadableStream({ pull(c) { if (i === 3) return c.close(); c.enqueue(new TextEncoder().encode('part' + i++)); } });
    return new Response(body, { status: 207, headers: { 'content-type': 'text/x-parts', 'set-cookie': 'a=1' } });
  }`,
  thrower: `export default () => { throw new Error('secret detail'); }`,
  early: `export default () => new Response(new ReadableStream({ start(c) { c.error(new Error('no body')); } }))`,
};

/** Rate limits on, with a budget this file uses up on purpose (the last test). */
const ENV = { LOG_LEVEL: 'info', RATE_LIMIT_PLAN: 'enterprise', RATE_LIMIT_PER_MINUTE: '70' };

async function side(frontLane: boolean): Promise<Side> {
  const { stream, lines } = jsonLines();
  const fastify: string[] = [];
  const t = await startApp(
    'embedded',
    ENV,
    (app) =>
      app.addHook('onRequest', (request, _reply, done) => {
        fastify.push(`${request.method} ${request.url}`);
        done();
      }),
    stream,
    { frontLane },
  );
  for (const [slug, code] of Object.entries(FUNCTIONS)) {
    const r = await t.fetch('/api/functions', {
      method: 'POST',
      headers: { 'x-api-key': t.adminKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: slug, slug, code }),
    });
    expect(r.status, await r.text()).toBe(201);
  }
  const user = await createTestUser(t, EMAIL);
  const own: Array<[string, string]> = [
    [user.token, '(token)'],
    [user.userId, '(user id)'],
    [t.adminKey, '(admin key)'],
    [t.anonKey, '(anon key)'],
    [new URL(t.url).port, '(port)'],
  ];
  return { t, stdout: lines, fastify, own, auth: { user: user.token, anon: t.anonKey, admin: t.adminKey } };
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const FOREIGN = `${b64({ alg: 'HS256' })}.${b64({ iss: 'someone-else', sub: 'x' })}.c2ln`;

interface Case {
  name: string;
  method: string;
  path: string;
  headers?: (s: Side) => Record<string, string>;
  body?: () => BodyInit;
  /** Whether the lane answers it (else Fastify does, with the lane on too). */
  lane: boolean;
}

const json = { 'content-type': 'application/json' };
/** A call of the echo function with these headers, which the lane takes. */
const echo = (name: string, headers: Case['headers'], method = 'GET'): Case => ({
  name,
  method,
  path: '/functions/echo',
  headers,
  lane: true,
});
const CASES: Case[] = [
  { name: 'GET', method: 'GET', path: '/functions/echo', lane: true },
  { name: 'query string', method: 'GET', path: '/functions/echo?a=1&b=%20x', lane: true },
  {
    name: 'POST JSON',
    method: 'POST',
    path: '/functions/echo',
    headers: () => json,
    body: () => '{"a":1}',
    lane: true,
  },
  { name: 'POST without body', method: 'POST', path: '/functions/echo', lane: true },
  {
    name: 'PUT bytes, no type',
    method: 'PUT',
    path: '/functions/echo',
    body: () => new Uint8Array([104, 105]),
    lane: true,
  },
  { name: 'DELETE', method: 'DELETE', path: '/functions/echo', lane: true },
  {
    name: 'streamed body',
    method: 'PATCH',
    path: '/functions/echo',
    headers: () => ({ 'content-type': 'text/plain' }),
    body: () => new Blob(['streamed ', 'body']).stream(),
    lane: true,
  },
  echo('user token', (s) => ({ authorization: `Bearer ${s.auth.user}` })),
  echo('anon key', (s) => ({ apikey: s.auth.anon })),
  echo('admin key', (s) => ({ 'x-api-key': s.auth.admin }), 'POST'),
  echo('wrong token', () => ({ authorization: 'Bearer anon_wrong' })),
  echo('foreign token', () => ({ authorization: `Bearer ${FOREIGN}` })),
  echo('client x-plinth-*', () => ({ 'x-plinth-role': 'admin', 'x-plinth-user-id': 'spoofed' })),
  echo('CORS', () => ({ origin: 'https://app.example' })),
  { name: 'missing function', method: 'POST', path: '/functions/no-such', lane: true },
  { name: 'throws', method: 'GET', path: '/functions/thrower', lane: true },
  { name: '204', method: 'GET', path: '/functions/nobody', lane: true },
  { name: 'Buffer without type', method: 'GET', path: '/functions/bytes', lane: true },
  { name: 'a type that is none', method: 'GET', path: '/functions/badtype', lane: true },
  { name: 'large body', method: 'GET', path: '/functions/big', lane: true },
  { name: 'streamed answer', method: 'GET', path: '/functions/stream', lane: true },
  { name: 'stream fails first', method: 'GET', path: '/functions/early', lane: true },
  { name: 'HEAD', method: 'HEAD', path: '/functions/echo', lane: false },
  {
    name: 'preflight',
    method: 'OPTIONS',
    path: '/functions/echo',
    headers: () => ({ origin: 'https://app.example', 'access-control-request-method': 'POST' }),
    lane: false,
  },
  { name: 'trailing slash', method: 'GET', path: '/functions/echo/', lane: false },
  { name: 'sub-path', method: 'GET', path: '/functions/echo/a/b?c=1', lane: false },
  { name: 'percent-encoded slug', method: 'GET', path: '/functions/%65cho', lane: false },
  { name: 'upper case slug', method: 'GET', path: '/functions/Echo', lane: false },
  {
    name: 'body of no media type',
    method: 'POST',
    path: '/functions/echo',
    headers: () => ({ 'content-type': 'nonsense' }),
    body: () => 'x',
    lane: false,
  },
];

/** Replaces a side's own values by their names. */
function named(s: Side, text: string): string {
  for (const [value, name] of s.own) text = text.split(value).join(name);
  return text;
}

async function answer(s: Side, c: Case, id: string) {
  const body = c.body?.();
  const r = await s.t.fetch(c.path, {
    method: c.method,
    headers: { 'x-request-id': id, ...c.headers?.(s) },
    body,
    ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
  } as RequestInit);
  const text = await r.text();
  const h = Object.fromEntries(r.headers);
  delete h.date;
  if (h['x-ratelimit-reset'] !== undefined) {
    expect(Number(h['x-ratelimit-reset']), `${c.name}: reset`).toBeGreaterThan(Date.now() / 1000 - 1);
    h['x-ratelimit-reset'] = '(unix time)';
  }
  // Each side's window began at its own first request: the seconds left may differ by one.
  if (h['retry-after'] !== undefined) h['retry-after'] = '(seconds)';
  const seconds = text.replace(/retry in \d+ seconds?/, 'retry in (n) seconds');
  return {
    status: r.status,
    headers: h,
    body: named(s, seconds.replace(/"timestamp":"[^"]+"/, '"timestamp":"(time)"')),
  };
}

/** Fastify's request lines (and the error handler's) on stdout for one request id, without time and duration. */
function stdoutLines(s: Side, requestId: string) {
  return s.stdout
    .filter((l) => l.reqId === requestId)
    .map(({ time, responseTime, pid, hostname, ...rest }) => JSON.parse(named(s, JSON.stringify(rest))));
}

async function functionMetrics(s: Side): Promise<string[]> {
  const { body } = await s.t.deps.metrics.scrape();
  return body
    .split('\n')
    .filter((l) => /^plinth_http_request(s_total|_duration_seconds_count)\{.*route="\/functions\//.test(l))
    .sort();
}

describe('function calls in the front lane', () => {
  let lane: Side;
  let fastify: Side;

  beforeAll(async () => {
    [lane, fastify] = await Promise.all([side(true), side(false)]);
  }, 180_000);
  afterAll(async () => {
    await Promise.all([lane?.t.close(), fastify?.t.close()]);
  });

  it('answers as Fastify does: status, headers, body, log line, request lines and metrics', async () => {
    for (const [i, c] of CASES.entries()) {
      const id = `fn-lane-${i}`;
      const a = await answer(lane, c, id);
      const b = await answer(fastify, c, id);
      expect(a, c.name).toEqual(b);
      const reached = (s: Side) => s.fastify.includes(`${c.method} ${c.path}`);
      // (A preflight is answered by the CORS hook, before this one: it reaches it on neither side.)
      expect(reached(lane), `${c.name}: reached Fastify`).toBe(c.lane ? false : reached(fastify));
      if (c.lane) expect(reached(fastify), `${c.name}: reached Fastify without the lane`).toBe(true);
      const [stored, fastifys] = [await storedApiLine(lane.t, id, 1000), await storedApiLine(fastify.t, id, 1000)];
      expect(stored, `${c.name}: log line`).not.toBeNull();
      expect(stored?.body.ip, `${c.name}: ip`).toBe('127.0.0.1');
      expect(stored, `${c.name}: log line`).toEqual(fastifys);
      const out = stdoutLines(lane, id);
      expect(out.map((l) => l.msg).slice(0, 1), `${c.name}: request lines`).toEqual(['incoming request']);
      expect(out, `${c.name}: request lines`).toEqual(stdoutLines(fastify, id));
    }
    expect(await functionMetrics(lane)).toEqual(await functionMetrics(fastify));
  });

  it('passes the caller as Fastify does: never the admin key, nor the client x-plinth-* headers', async () => {
    // Both sides take the same calls, so that their budgets stay equal for the next test.
    for (const s of [lane, fastify]) {
      const seen = async (headers: Record<string, string>) =>
        (await (await s.t.fetch('/functions/echo', { method: 'POST', headers })).json()).headers;
      const admin = await seen({ 'x-api-key': s.auth.admin, authorization: `Bearer ${s.auth.admin}` });
      expect(JSON.stringify(admin)).not.toContain(s.auth.admin);
      expect(admin['x-plinth-role']).toBe('admin');
      expect((await seen({ 'x-plinth-role': 'admin' }))['x-plinth-role']).toBe('anon');
      const foreign = await seen({ authorization: `Bearer ${FOREIGN}` });
      expect([foreign.authorization, foreign['x-plinth-role']]).toEqual([`Bearer ${FOREIGN}`, 'anon']);
      const user = await seen({ authorization: `Bearer ${s.auth.user}` });
      expect(user['x-plinth-user-email']).toBe(EMAIL);
    }
  });

  it('counts calls in the budget of Fastify routes, to the same 429', async () => {
    // Lane calls and Fastify's sub-path route alternate; every answer takes one from the one budget.
    const steps = Array.from(
      { length: 100 },
      (_, i): Case => ({
        name: `budget ${i}`,
        method: 'GET',
        path: i % 2 ? '/functions/echo/sub' : '/functions/nobody',
        lane: i % 2 === 0,
      }),
    );
    let last = Number.POSITIVE_INFINITY;
    const refused: string[] = [];
    for (const [i, c] of steps.entries()) {
      const a = await answer(lane, c, `budget-${i}`);
      expect(a, c.name).toEqual(await answer(fastify, c, `budget-${i}`));
      const remaining = Number(a.headers['x-ratelimit-remaining']);
      if (a.status === 429) {
        expect(JSON.parse(a.body)).toMatchObject({ statusCode: 429, error: 'RATE_LIMITED' });
        refused.push(c.path);
        if (refused.length === 2) break;
        continue;
      }
      expect(remaining, c.name).toBe(last === Number.POSITIVE_INFINITY ? remaining : last - 1);
      last = remaining;
    }
    // Refused on both: the lane's call and Fastify's route.
    expect(refused.sort()).toEqual(['/functions/echo/sub', '/functions/nobody']);
    expect(lane.fastify.includes('GET /functions/nobody')).toBe(false);
  });
});

describe('the function lane leaves to Fastify what the lane may not answer', () => {
  it('takes nothing while the lane is closed (a drain under way, TRUST_PROXY, no Host)', () => {
    const kit = {
      open: () => false,
      begin: () => {
        throw new Error('taken');
      },
    } as unknown as LaneKit;
    const lane = new FunctionLane({ functions: null as never, identity: null as never, publicUrl: null }, null);
    const req = { url: '/functions/echo', method: 'GET', headers: {} } as IncomingMessage;
    expect(lane.answer(req, {} as ServerResponse, kit)).toBe(false);
  });
});
