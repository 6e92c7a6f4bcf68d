// The front lane's object PUTs (src/http/lanes/storage.ts): a small raw `PUT
// /api/storage/buckets/<bucket>/objects/<key>` answered ahead of Fastify when the caller is known
// and the bucket is cached. The same requests go to a server with the lane and to one without it
// (Fastify answers everything), set up alike: status, headers (rate-limit headers included: one
// budget whichever answers), body, Fastify's request lines on stdout, the stored `api` line, the
// route's metrics and the bytes stored must be the same; a request the lane should take must not
// reach Fastify's hooks, and one it should leave must.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { jsonLines, storedApiLine } from '../helpers/log.js';

const A = '00000000-0000-4000-8000-00000000001a';
const B = '00000000-0000-4000-8000-00000000001b';
const GONE = '00000000-0000-4000-8000-00000000001c';
const C = '00000000-0000-4000-8000-00000000001d';
const LIMIT = 40;
const MAX_UPLOAD = 48 * 1024;
const ROUTE = '/api/storage/buckets/:bucketName/objects/*';

interface Side {
  t: TestApp;
  stdout: Array<Record<string, any>>;
  /** Request ids that reached Fastify's onRequest hooks. */
  fastify: Set<string>;
  tokens: Record<string, string>;
}

async function side(backend: 'embedded' | 'postgres', frontLane: boolean): Promise<Side> {
  const { stream, lines } = jsonLines();
  const fastify = new Set<string>();
  const env = {
    LOG_LEVEL: 'info',
    RATE_LIMIT_PLAN: 'enterprise',
    RATE_LIMIT_PER_MINUTE: String(LIMIT),
    MAX_UPLOAD_BYTES: String(MAX_UPLOAD),
  };
  const t = await startApp(
    backend,
    env,
    (app) =>
      app.addHook('onRequest', (request, _reply, done) => {
        fastify.add(request.id);
        done();
      }),
    stream,
    { frontLane },
  );
  const tokens: Record<string, string> = {};
  for (const [i, id] of [A, B, GONE, C].entries()) {
    await t.deps.db.query(
      `insert into auth.users (id, email, password_hash, email_verified, profile) values ($1, $2, 'x', true, '{}')`,
      [id, `put-lane-${i}@example.com`],
    );
    const sid = id.replace(/.$/, 'f').replace(/^0/, String(i + 1));
    await t.deps.db.query(
      `insert into auth.sessions (id, user_id, expires_at) values ($1, $2, now() + interval '1 day')`,
      [sid, id],
    );
    tokens[id] = await t.deps.tokens.sign({ sub: id, email: `put-lane-${i}@example.com`, role: 'authenticated', sid });
  }
  for (const [name, isPublic] of [
    ['files', false],
    ['open', true],
  ] as const) {
    const r = await t.fetch('/api/storage/buckets', {
      method: 'POST',
      headers: { 'x-api-key': t.adminKey, 'content-type': 'application/json' },
      body: JSON.stringify({ bucketName: name, isPublic }),
    });
    expect(r.status).toBe(201);
  }
  return { t, stdout: lines, fastify, tokens };
}

/**
 * One answer, made comparable: no Date, no server origin, time or version tag (they differ
 * between the two servers), the rate-limit reset (a unix time) checked and set aside.
 */
async function answer(s: Side, path: string, init: RequestInit & { headers: Record<string, string> }) {
  const r = await s.t.fetch(path, init);
  const text = await r.text();
  const h = Object.fromEntries(r.headers);
  delete h.date;
  if (h['x-ratelimit-reset'] !== undefined) {
    expect(Math.abs(Number(h['x-ratelimit-reset']) - (Date.now() / 1000 + 60))).toBeLessThan(62);
    h['x-ratelimit-reset'] = '(reset)';
  }
  // The two servers' windows began a moment apart: the seconds left may differ by one.
  if (h['retry-after'] !== undefined) {
    expect(h['retry-after']).toMatch(/^\d+$/);
    h['retry-after'] = '(seconds)';
  }
  expect(Number(h['content-length'])).toBe(Buffer.byteLength(text));
  h['content-length'] = '(length)';
  // A path Fastify's router cannot decode is answered before its hooks, without a request id.
  if (!path.includes('%zz')) expect(h['x-request-id']).toBe(init.headers['x-request-id']);
  const body = text
    .replaceAll(s.t.url, '(origin)')
    .replace(/"timestamp":"[^"]+"/, '"timestamp":"(time)"')
    .replace(/retry in \d+ seconds?/, 'retry in (seconds)')
    .replace(/"uploadedAt":"[^"]+"/, '"uploadedAt":"(time)"')
    .replace(/"etag":"[0-9a-f]{32}"/, '"etag":"(tag)"');
  return { status: r.status, headers: h, body };
}

/** The stdout lines of one request id, without time and duration. */
function stdoutLines(s: Side, requestId: string) {
  return s.stdout.filter((l) => l.reqId === requestId).map(({ time, responseTime, ...rest }) => rest);
}

/** The request metrics of the PUT route: counts by method and status, and the histogram's count. */
async function routeMetrics(s: Side): Promise<string[]> {
  const { body } = await s.t.deps.metrics.scrape();
  return body
    .split('\n')
    .filter((l) => /^plinth_http_request(s_total|_duration_seconds_count)\{/.test(l) && l.includes(`route="${ROUTE}"`))
    .sort();
}

type Who = 'a' | 'b' | 'c' | 'gone' | 'anon' | 'admin' | 'none' | 'wrong';

function credential(s: Side, who: Who): Record<string, string> {
  if (who === 'anon') return { apikey: s.t.anonKey };
  if (who === 'admin') return { 'x-api-key': s.t.adminKey };
  if (who === 'wrong') return { 'x-api-key': 'ik_wrong' };
  if (who === 'none') return {};
  return { authorization: `Bearer ${s.tokens[{ a: A, b: B, c: C, gone: GONE }[who]]}` };
}

interface Put {
  body?: string | Uint8Array | FormData | (() => ReadableStream);
  headers?: Record<string, string>;
}

describe.each(backends())('object PUTs in the front lane (%s)', (backend) => {
  let lane: Side;
  let plain: Side;
  let n = 0;

  beforeAll(async () => {
    [lane, plain] = await Promise.all([side(backend, true), side(backend, false)]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([lane?.t.close(), plain?.t.close()]);
  });

  /**
   * Sends the PUT to both servers and compares everything, the object as stored after it
   * included; `lane`: whether the lane must have answered it (else Fastify must have, on both).
   */
  async function same(who: Who, path: string, expected: { lane: boolean; status: number }, put: Put = {}) {
    const id = `pl-${backend}-${n++}`;
    const send = (s: Side) => {
      const b = put.body ?? 'x'.repeat(4096);
      const body = typeof b === 'function' ? b() : b;
      const headers = { 'content-type': 'application/octet-stream', ...credential(s, who), ...put.headers };
      // No Content-Type at all: a form's own, or none ('' here).
      if (body instanceof FormData || headers['content-type'] === '')
        delete (headers as Record<string, string>)['content-type'];
      const init = { method: 'PUT', body, headers: { ...headers, 'x-request-id': id }, duplex: 'half' };
      return answer(s, path, init as RequestInit & { headers: Record<string, string> });
    };
    const [a, b] = [await send(lane), await send(plain)];
    const name = `${who} ${path} ${JSON.stringify(put.headers ?? {})}`;
    expect(a, name).toEqual(b);
    expect(a.status, `${name}: ${a.body}`).toBe(expected.status);
    const hooks = !path.includes('%zz');
    expect(plain.fastify.has(id), `${name}: Fastify answered without the lane`).toBe(hooks);
    expect(lane.fastify.has(id), `${name}: reached Fastify with the lane`).toBe(!expected.lane && hooks);
    expect(await storedApiLine(lane.t, id, 1000), `${name}: stored line`).toEqual(
      await storedApiLine(plain.t, id, 1000),
    );
    const out = stdoutLines(lane, id);
    if (hooks) {
      expect(out.map((l) => l.msg).slice(0, 1), `${name}: request lines`).toEqual(['incoming request']);
      expect(out.at(-1)?.msg, `${name}: request lines`).toBe('request completed');
    }
    expect(out, `${name}: request lines`).toEqual(stdoutLines(plain, id));
    expect(await stored(lane, path), `${name}: the object stored`).toEqual(await stored(plain, path));
    return a;
  }

  /** The object at a PUT's path as an admin reads it: status, type, bytes. */
  async function stored(s: Side, path: string) {
    const r = await s.t.fetch(path.split('?')[0]!, { headers: { 'x-api-key': s.t.adminKey } });
    return {
      status: r.status,
      type: r.headers.get('content-type'),
      bytes: Buffer.from(await r.arrayBuffer()).toString('hex'),
    };
  }

  it('stores small raw bodies as Fastify does, for the admin and for users', async () => {
    await same('admin', '/api/storage/buckets/files/objects/one.bin', { lane: true, status: 200 });
    // Replaced, with another body and type; no type: the key's extension decides.
    await same(
      'admin',
      '/api/storage/buckets/files/objects/one.bin',
      { lane: true, status: 200 },
      {
        body: 'second',
        headers: { 'content-type': 'text/plain; charset=utf-8' },
      },
    );
    await same(
      'admin',
      '/api/storage/buckets/open/objects/dir/notes.txt',
      { lane: true, status: 200 },
      {
        body: new TextEncoder().encode('hello'),
        headers: { 'content-type': '' },
      },
    );
    await same('admin', '/api/storage/buckets/open/objects/dir/a%20b%2Fc.json', { lane: true, status: 200 });
    await same('admin', '/api/storage/buckets/open/objects/empty', { lane: true, status: 200 }, { body: '' });
    await same(
      'admin',
      '/api/storage/buckets/open/objects/cors',
      { lane: true, status: 200 },
      {
        headers: { origin: 'https://app.example' },
      },
    );
    await same(
      'admin',
      '/api/storage/buckets/files/objects/max',
      { lane: true, status: 200 },
      {
        body: new Uint8Array(MAX_UPLOAD),
      },
    );
    // A token's first use is verified by Fastify; then the lane knows it.
    await same('a', '/api/storage/buckets/files/objects/a/1', { lane: false, status: 200 });
    await same('a', '/api/storage/buckets/files/objects/a/2', { lane: true, status: 200 });
    await same('a', '/api/storage/buckets/files/objects/a/1', { lane: true, status: 200 }, { body: 'again' });
    // Someone else's object: refused (in a private bucket, as missing), the body drained, as the route does.
    await same('b', '/api/storage/buckets/files/objects/b/1', { lane: false, status: 200 });
    await same('b', '/api/storage/buckets/files/objects/a/1', { lane: true, status: 404 });
    await same('a', '/api/storage/buckets/open/objects/a/1', { lane: true, status: 200 });
    await same('b', '/api/storage/buckets/open/objects/a/1', { lane: true, status: 403 });
    // No such bucket: the same 404 (the lookup is putObject's, whichever answers).
    await same('a', '/api/storage/buckets/nope/objects/x', { lane: true, status: 404 });
    // The admin may replace a user's object.
    await same('admin', '/api/storage/buckets/files/objects/a/2', { lane: true, status: 200 });
    expect(await routeMetrics(lane)).toEqual(await routeMetrics(plain));
  });

  it('leaves to Fastify what it does not answer', async () => {
    const files = '/api/storage/buckets/files/objects';
    await same('none', `${files}/x`, { lane: false, status: 401 });
    await same('wrong', `${files}/x`, { lane: false, status: 401 });
    await same('anon', `${files}/x`, { lane: false, status: 403 });
    await same('admin', '/api/storage/buckets/b%61d/objects/x', { lane: false, status: 404 });
    await same('admin', `${files}/q?x=1`, { lane: false, status: 200 });
    await same('admin', `${files}/bad%5Ckey`, { lane: false, status: 400 });
    await same('admin', `${files}/bad%zz`, { lane: false, status: 400 });
    await same('admin', `${files}/trailing/`, { lane: false, status: 400 });
    await same('admin', `${files}/big`, { lane: false, status: 413 }, { body: new Uint8Array(MAX_UPLOAD + 1) });
    await same('admin', `${files}/odd-type`, { lane: false, status: 415 }, { headers: { 'content-type': 'oops' } });
    const form = new FormData();
    form.append('file', new Blob(['from a form'], { type: 'text/plain' }), 'f.txt');
    await same('admin', `${files}/form`, { lane: false, status: 200 }, { body: form });
    const chunked = () =>
      new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode('streamed'));
          c.close();
        },
      });
    await same('admin', `${files}/chunked`, { lane: false, status: 200 }, { body: chunked });
    expect(await routeMetrics(lane)).toEqual(await routeMetrics(plain));
  });

  it("answers a signed-out session's token 401, as Fastify", async () => {
    await same('gone', '/api/storage/buckets/files/objects/g/1', { lane: false, status: 200 });
    await same('gone', '/api/storage/buckets/files/objects/g/2', { lane: true, status: 200 });
    for (const s of [lane, plain])
      await s.t.deps.db.query('update auth.sessions set revoked_at = now() where user_id = $1', [GONE]);
    await same('gone', '/api/storage/buckets/files/objects/g/3', { lane: true, status: 401 });
  });

  it('counts in the one budget and answers 429 as Fastify', async () => {
    const files = '/api/storage/buckets/files/objects';
    // A caller of its own (a fresh window), spent on Fastify's answers (a query string), then the lane's.
    await same('c', `${files}/c/0`, { lane: false, status: 200 });
    for (let i = 0; i < LIMIT - 6; i++) await same('c', `${files}/c/f?i=${i}`, { lane: false, status: 200 });
    let last = await same('c', `${files}/c/1`, { lane: true, status: 200 });
    while (last.headers['x-ratelimit-remaining'] !== '0')
      last = await same('c', `${files}/c/2`, { lane: true, status: 200 });
    const refused = await same('c', `${files}/c/3`, { lane: true, status: 429 });
    expect(JSON.parse(refused.body)).toMatchObject({ error: 'RATE_LIMITED' });
    await same('c', `${files}/c/4?x=1`, { lane: false, status: 429 });
    expect(await routeMetrics(lane)).toEqual(await routeMetrics(plain));
  });
});
