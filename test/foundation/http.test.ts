// The HTTP plumbing every endpoint shares: health, error envelope, request ids, CORS,
// identity and access levels. A few probe routes are added to the real app to exercise
// body parsing and failures that the product routes reach only indirectly.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Type } from '@fastify/type-provider-typebox';
import { startApp, createTestUser, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { jsonLines } from '../helpers/log.js';

function expectEnvelope(body: any, status: number, code: string) {
  expect(body).toEqual({
    statusCode: status,
    error: code,
    message: expect.any(String),
    nextActions: expect.any(String),
  });
}

describe.each(backends())('foundation HTTP (%s)', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp(backend, { BODY_LIMIT_BYTES: '2048' }, (app) => {
      app.post(
        '/api/_probe/echo',
        { config: { access: 'public' }, schema: { body: Type.Object({ n: Type.Integer() }) } },
        async (req) => ({ got: req.body, identity: req.identity.kind }),
      );
      app.get('/api/_probe/boom', { config: { access: 'public' } }, async () => {
        throw new Error('secret internal detail at /srv/db.ts:42');
      });
      app.get('/api/_probe/admin', async () => ({ ok: true }));
      app.get('/api/_probe/user', { config: { access: 'user' } }, async (req) => ({ kind: req.identity.kind }));
      app.get('/api/_probe/any', { config: { access: 'any' } }, async (req) => ({ kind: req.identity.kind }));
    });
  });
  afterAll(() => t?.close());

  it('GET /api/health answers the spec fields plus version, with no credential', async () => {
    const r = await t.fetch('/api/health');
    expect(r.status).toBe(200);
    const body = await r.json();
    expect(body).toEqual({
      status: 'ok',
      service: 'plinth',
      version: '1.5.1',
      plinthVersion: expect.stringMatching(/^\d+\.\d+\.\d+/),
      timestamp: expect.any(String),
    });
    expect(Math.abs(Date.parse(body.timestamp) - Date.now())).toBeLessThan(60_000);
  });

  it('GET /api/health?checks=true reports the database and its engine', async () => {
    const r = await t.fetch('/api/health?checks=true');
    expect(r.status).toBe(200);
    expect((await r.json()).checks.database).toEqual({ status: 'ok', engine: backend });
  });

  it('GET /api/health ignores even a bad credential', async () => {
    const r = await t.fetch('/api/health', { headers: { authorization: 'Bearer nonsense' } });
    expect(r.status).toBe(200);
  });

  it('serves the OpenAPI document generated from the route schemas', async () => {
    const r = await t.fetch('/api/openapi.json');
    expect(r.status).toBe(200);
    const doc = await r.json();
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.paths['/api/health']).toBeDefined();
  });

  const errorCases: Array<[string, RequestInit & { path: string }, number, string]> = [
    ['unknown route', { path: '/api/nope' }, 404, 'ROUTE_NOT_FOUND'],
    ['path parameter over the router limit', { path: `/api/functions/${'a'.repeat(3000)}` }, 414, 'URI_TOO_LONG'],
    ['undecodable path', { path: '/api/functions/%E0%A4%A' }, 400, 'INVALID_INPUT'],
    [
      'malformed JSON',
      { path: '/api/_probe/echo', method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"n":' },
      400,
      'INVALID_JSON',
    ],
    [
      'empty JSON body',
      { path: '/api/_probe/echo', method: 'POST', headers: { 'content-type': 'application/json' }, body: '' },
      400,
      'INVALID_JSON',
    ],
    [
      'wrong type in body',
      { path: '/api/_probe/echo', method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"n":"x"}' },
      400,
      'INVALID_INPUT',
    ],
    [
      'number as a string in the body (no coercion)',
      { path: '/api/_probe/echo', method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"n":"1"}' },
      400,
      'INVALID_INPUT',
    ],
    [
      'wrong content type',
      { path: '/api/_probe/echo', method: 'POST', headers: { 'content-type': 'application/xml' }, body: '<n>1</n>' },
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    [
      'body over the limit',
      {
        path: '/api/_probe/echo',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ n: 1, pad: 'x'.repeat(5000) }),
      },
      413,
      'PAYLOAD_TOO_LARGE',
    ],
    [
      'prototype poisoning',
      {
        path: '/api/_probe/echo',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"n":1,"__proto__":{"x":1}}',
      },
      400,
      'INVALID_JSON',
    ],
    [
      'JSON nested deeper than 512 levels',
      {
        path: '/api/_probe/echo',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: `{"n":1,"d":${'['.repeat(512)}${']'.repeat(512)}}`,
      },
      400,
      'INVALID_INPUT',
    ],
    [
      'a lone UTF-16 surrogate in a string',
      {
        path: '/api/_probe/echo',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"n":1,"s":"a\\ud800b"}',
      },
      400,
      'INVALID_INPUT',
    ],
    [
      'a lone UTF-16 surrogate in a key',
      {
        path: '/api/_probe/echo',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"n":1,"\\udc00":2}',
      },
      400,
      'INVALID_INPUT',
    ],
    [
      'bytes that are not UTF-8 in a JSON body',
      {
        path: '/api/_probe/echo',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: Buffer.from('{"n":1,"s":"\xff"}', 'latin1'),
      },
      400,
      'INVALID_JSON',
    ],
    [
      "JSON sent as text/plain (fetch's default for a string body)",
      { path: '/api/_probe/echo', method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{"n":1}' },
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
  ];
  it.each(errorCases)('%s → envelope', async (_name, { path, ...init }, status, code) => {
    const r = await t.fetch(path, init);
    expect(r.status).toBe(status);
    expect(r.headers.get('content-type')).toMatch(/application\/json/);
    expectEnvelope(await r.json(), status, code);
  });

  it('accepts JSON at the depth limit and well-formed surrogate pairs', async () => {
    // The outer object is one level: 511 more arrays make 512.
    let r = await t.fetch('/api/_probe/echo', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"n":1,"d":${'['.repeat(511)}${']'.repeat(511)}}`,
    });
    expect(r.status).toBe(200);
    r = await t.fetch('/api/_probe/echo', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"n":1,"s":"\\ud83d\\ude00 [{"}',
    });
    expect(r.status).toBe(200);
    expect((await r.json()).got.s).toBe('\u{1F600} [{');
  });

  /** Sends raw bytes and reads the answer until the server closes the connection. */
  function rawRequest(text: string): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const sock = net.connect(Number(new URL(t.url).port), '127.0.0.1', () => sock.write(text));
      let data = '';
      sock.on('data', (d) => (data += d));
      sock.on('end', () => resolve(data));
      sock.on('error', reject);
    });
  }
  const bodyOf = (raw: string) => JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));

  it('a request Node cannot parse still gets the envelope', async () => {
    const raw = await rawRequest('GET /api/health HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n');
    expect(raw).toMatch(/^HTTP\/1\.1 400 Bad Request/);
    expectEnvelope(bodyOf(raw), 400, 'MALFORMED_REQUEST');
  });

  it('an HTTP/1.1 request without Host, or with an unknown Expect, gets the envelope', async () => {
    let raw = await rawRequest('GET /api/health HTTP/1.1\r\nConnection: close\r\n\r\n');
    expect(raw).toMatch(/^HTTP\/1\.1 400 Bad Request/);
    expectEnvelope(bodyOf(raw), 400, 'MALFORMED_REQUEST');
    expect(bodyOf(raw).message).toMatch(/Host header/);
    raw = await rawRequest('GET /api/health HTTP/1.1\r\nHost: x\r\nExpect: bogus\r\nConnection: close\r\n\r\n');
    expect(raw).toMatch(/^HTTP\/1\.1 417 Expectation Failed/);
    expectEnvelope(bodyOf(raw), 417, 'EXPECTATION_FAILED');
    // HTTP/1.0 has no Host requirement.
    raw = await rawRequest('GET /api/health HTTP/1.0\r\n\r\n');
    expect(raw).toMatch(/^HTTP\/1\.1 200 OK/);
  });

  it('a 500 carries no internal text, only the request id', async () => {
    const r = await t.fetch('/api/_probe/boom');
    expect(r.status).toBe(500);
    const body = await r.json();
    expectEnvelope(body, 500, 'INTERNAL_ERROR');
    expect(JSON.stringify(body)).not.toMatch(/secret|srv|db\.ts/);
    expect(body.nextActions).toContain(r.headers.get('x-request-id'));
  });

  it('sets X-Request-Id, keeping a well-formed incoming one and replacing a hostile one', async () => {
    const a = await t.fetch('/api/health');
    expect(a.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const b = await t.fetch('/api/health', { headers: { 'x-request-id': 'trace-123.abc' } });
    expect(b.headers.get('x-request-id')).toBe('trace-123.abc');
    const c = await t.fetch('/api/health', { headers: { 'x-request-id': 'bad id\twith {json}' } });
    expect(c.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('CORS: any origin by default, preflight answered, headers exposed', async () => {
    const r = await t.fetch('/api/health', { headers: { origin: 'https://app.example' } });
    expect(r.headers.get('access-control-allow-origin')).toBe('https://app.example');
    const exposed = r.headers.get('access-control-expose-headers')!.toLowerCase();
    for (const h of [
      'x-total-count',
      'content-range',
      'x-ratelimit-limit',
      'x-ratelimit-remaining',
      'x-ratelimit-reset',
      'x-request-id',
    ]) {
      expect(exposed).toContain(h);
    }
    const pre = await t.fetch('/api/database/records/x', {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'PATCH',
        'access-control-request-headers': 'authorization,content-type,prefer',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-methods')).toContain('PATCH');
    expect(pre.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(pre.headers.get('access-control-allow-headers')).toBe('authorization,content-type,prefer');
    expect(pre.headers.get('access-control-max-age')).toBe('600');
    // Answered before identity: an admin route's preflight needs no credential.
    const admin = await t.fetch('/api/_probe/admin', {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' },
    });
    expect(admin.status).toBe(204);
    // Every origin, so no credentials; the answer varies by Origin; none without one.
    expect(r.headers.get('access-control-allow-credentials')).toBeNull();
    expect(r.headers.get('vary')).toMatch(/origin/i);
    const plain = await t.fetch('/api/health');
    expect(plain.headers.get('access-control-allow-origin')).toBeNull();
    expect(plain.headers.get('vary')).toMatch(/origin/i);
  });

  describe('identity and access', () => {
    const cases: Array<[string, string, () => Record<string, string>, number, string?]> = [
      ['admin route, no credential', '/api/_probe/admin', () => ({}), 401, 'UNAUTHORIZED'],
      ['admin route, x-api-key admin', '/api/_probe/admin', () => ({ 'x-api-key': t.adminKey }), 200],
      ['admin route, Bearer admin key', '/api/_probe/admin', () => ({ authorization: `Bearer ${t.adminKey}` }), 200],
      ['admin route, anon key', '/api/_probe/admin', () => ({ apikey: t.anonKey }), 403, 'FORBIDDEN'],
      [
        'admin route, wrong admin key',
        '/api/_probe/admin',
        () => ({ 'x-api-key': `ik_${'0'.repeat(64)}` }),
        401,
        'INVALID_API_KEY',
      ],
      ['any route, anon key', '/api/_probe/any', () => ({ apikey: t.anonKey }), 200],
      [
        'any route, wrong anon key',
        '/api/_probe/any',
        () => ({ apikey: `anon_${'0'.repeat(64)}` }),
        401,
        'INVALID_API_KEY',
      ],
      [
        'any route, garbage bearer',
        '/api/_probe/any',
        () => ({ authorization: 'Bearer abc.def.ghi' }),
        401,
        'INVALID_TOKEN',
      ],
      [
        'any route, malformed Authorization',
        '/api/_probe/any',
        () => ({ authorization: 'Basic Zm9vOmJhcg==' }),
        401,
        'UNAUTHORIZED',
      ],
      ['user route, anon key', '/api/_probe/user', () => ({ apikey: t.anonKey }), 403, 'FORBIDDEN'],
      [
        'public route, bad credential is still refused',
        '/api/_probe/echo',
        () => ({ authorization: 'Bearer x.y.z' }),
        401,
        'INVALID_TOKEN',
      ],
    ];
    it.each(cases)('%s', async (_n, path, headers, status, code) => {
      const isEcho = path.endsWith('echo');
      const r = await t.fetch(path, {
        method: isEcho ? 'POST' : 'GET',
        headers: { ...headers(), ...(isEcho ? { 'content-type': 'application/json' } : {}) },
        body: isEcho ? '{"n":1}' : undefined,
      });
      expect(r.status).toBe(status);
      if (code) expectEnvelope(await r.json(), status, code);
    });

    it('a user token identifies the user; a Bearer token wins over apikey', async () => {
      const u = await createTestUser(t);
      const r = await t.fetch('/api/_probe/user', { headers: { ...u.auth, apikey: t.anonKey } });
      expect(r.status).toBe(200);
      expect(await r.json()).toEqual({ kind: 'user' });
      const admin = await t.fetch('/api/_probe/admin', { headers: u.auth });
      expect(admin.status).toBe(403);
    });

    it('a revoked session or a deleted user makes the token a 401 at once', async () => {
      const u = await createTestUser(t);
      await t.deps.db.query('update auth.sessions set revoked_at = now() where id = $1', [u.sessionId]);
      expect((await t.fetch('/api/_probe/any', { headers: u.auth })).status).toBe(401);
      const v = await createTestUser(t);
      await t.deps.db.query('delete from auth.users where id = $1', [v.userId]);
      expect((await t.fetch('/api/_probe/any', { headers: v.auth })).status).toBe(401);
    });
  });
});

describe('CORS_ORIGINS restricts origins', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp('embedded', { CORS_ORIGINS: 'https://good.example' });
  });
  afterAll(() => t?.close());

  it('allows a listed origin and not another', async () => {
    const good = await t.fetch('/api/health', { headers: { origin: 'https://good.example' } });
    expect(good.headers.get('access-control-allow-origin')).toBe('https://good.example');
    expect(good.headers.get('access-control-allow-credentials')).toBe('true');
    const bad = await t.fetch('/api/health', { headers: { origin: 'https://evil.example' } });
    expect(bad.headers.get('access-control-allow-origin')).toBeNull();
    expect(bad.headers.get('access-control-expose-headers')).toBeNull();
    const badPre = await t.fetch('/api/health', {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' },
    });
    expect(badPre.headers.get('access-control-allow-origin')).toBeNull();
    expect(badPre.headers.get('access-control-allow-methods')).toBeNull();
  });
});

describe('request logs', () => {
  const { stream, lines } = jsonLines();
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp(
      'embedded',
      { LOG_LEVEL: 'info' },
      (app) => {
        app.get('/api/_probe/boom', { config: { access: 'open' } }, async () => {
          throw new Error('internal detail');
        });
      },
      stream,
    );
  });
  afterAll(() => t?.close());

  const linesOf = (reqId: string) => lines.filter((l) => l.reqId === reqId);

  it('carry the request id on every line of a request, and mask secrets in URLs', async () => {
    const ok = await t.fetch('/api/health?token=s3cr3t-value&x=1', { headers: { 'x-request-id': 'trace-ok' } });
    expect(ok.status).toBe(200);
    const failed = await t.fetch('/api/_probe/boom', { headers: { 'x-request-id': 'trace-500' } });
    expect(failed.status).toBe(500);
    const refused = await t.fetch('/api/database/tables', { headers: { 'x-request-id': 'trace-401' } });
    expect(refused.status).toBe(401);
    await new Promise((r) => setTimeout(r, 50)); // "request completed" is written after the answer

    expect(linesOf('trace-ok').map((l) => l.msg)).toEqual(['incoming request', 'request completed']);
    expect(linesOf('trace-ok')[0]!.req).toEqual({
      method: 'GET',
      url: '/api/health?token=[redacted]&x=1',
      ip: '127.0.0.1',
    });
    expect(linesOf('trace-ok')[1]!.res).toEqual({ statusCode: 200 });
    expect(linesOf('trace-500').map((l) => l.msg)).toEqual([
      'incoming request',
      'unhandled error',
      'request completed',
    ]);
    expect(linesOf('trace-500')[1]!.err.message).toBe('internal detail');
    expect(linesOf('trace-401').some((l) => l.code === 'UNAUTHORIZED')).toBe(true);
    expect(JSON.stringify(lines)).not.toContain('s3cr3t-value');
    // A key sent in the query string by mistake, whatever its spelling, is masked too.
    const keyed = await t.fetch(
      '/api/health?api_key=ik_leak1&apiKey=leak2&client_secret=leak3&code=leak4&x-amz-signature=leak5&page=2',
      {
        headers: { 'x-request-id': 'trace-key' },
      },
    );
    expect(keyed.status).toBe(200);
    await new Promise((r) => setTimeout(r, 50));
    expect(linesOf('trace-key')[0]!.req.url).toBe(
      '/api/health?api_key=[redacted]&apiKey=[redacted]&client_secret=[redacted]&code=[redacted]&x-amz-signature=[redacted]&page=2',
    );
    expect(JSON.stringify(lines)).not.toMatch(/leak[1-5]/);
    // Every request line has an id; only the process's own lines (listening, shutdown) have none.
    expect(lines.filter((l) => l.req || l.res || l.err || l.code).every((l) => typeof l.reqId === 'string')).toBe(true);
  });

  it('are not written below the level', async () => {
    const quietLog = jsonLines();
    const quiet = await startApp('embedded', { LOG_LEVEL: 'warn' }, undefined, quietLog.stream);
    try {
      expect((await quiet.fetch('/api/health')).status).toBe(200);
      expect((await quiet.fetch('/api/no-such-route')).status).toBe(404);
    } finally {
      await quiet.close();
    }
    expect(quietLog.lines).toEqual([]);
  });
});
