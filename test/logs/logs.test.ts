// The log store over HTTP: API request lines (secrets masked), auth events, realtime connects
// and refusals, function invocations and console output; the read endpoints (filters, paging,
// InsForge's shape and source names, stats) and their 400/404/403 envelopes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { connectSocket, refusedHandshake, subscribe } from '../helpers/realtime.js';

describe.each(backends())('logs (%s)', (backend) => {
  let t: TestApp;
  const admin = () => ({ 'x-api-key': t.adminKey });
  const logs = (path: string) => call(t, 'GET', path, { headers: admin() });

  beforeAll(async () => {
    t = await startApp(backend);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('writes one line per API request, with the route, caller, request id and secrets masked', async () => {
    const user = await createTestUser(t);
    const r = await call(t, 'GET', '/api/auth/sessions/current?token=s3cr3t-signed&apikey=k3y-value&page=2', {
      token: user.token,
      headers: { 'x-request-id': 'req-logs-1' },
    });
    expect(r.status).toBe(200);
    const page = await logs('/api/logs/api?q=req-logs-1');
    expect(page.status).toBe(200);
    expect(page.body.total).toBe(1);
    const line = page.body.logs[0];
    expect(line).toMatchObject({
      source: 'api',
      level: 'info',
      eventMessage: expect.stringContaining('GET /api/auth/sessions/current'),
    });
    expect(line.body).toMatchObject({
      method: 'GET',
      route: '/api/auth/sessions/current',
      status: 200,
      caller: 'user',
      userId: user.userId,
      requestId: 'req-logs-1',
    });
    expect(line.body.durationMs).toBeGreaterThan(0);
    expect(line.body.bytesOut).toBeGreaterThan(0);
    expect(line.body.path).toBe('/api/auth/sessions/current?token=[redacted]&apikey=[redacted]&page=2');
    expect(JSON.stringify(page.body)).not.toMatch(/s3cr3t|k3y-value/);
    expect(Date.parse(line.timestamp)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('levels follow the status: 4xx warn, and level=warn shows warn and above', async () => {
    await call(t, 'GET', '/api/database/records/no_such_table', {
      headers: { ...admin(), 'x-request-id': 'req-logs-404' },
    });
    const warn = await logs('/api/logs/api?level=warn&q=req-logs-404');
    expect(warn.body.logs.map((l: any) => [l.level, l.body.status])).toEqual([['warn', 404]]);
    const error = await logs('/api/logs/api?level=error&q=req-logs-404');
    expect(error.body.total).toBe(0);
  });

  it('logs auth events: sign-up, sign-in ok and failed, refresh reuse, sign-out; never a password or token', async () => {
    const email = `logs-${Date.now()}@example.com`;
    const up = await call(t, 'POST', '/api/auth/signup', { body: { email, password: 'correct-horse-9' } });
    expect(up.status).toBe(200);
    expect((await call(t, 'POST', '/api/auth/signin', { body: { email, password: 'wrong-password-1' } })).status).toBe(
      401,
    );
    const signin = await call(t, 'POST', '/api/auth/signin', { body: { email, password: 'correct-horse-9' } });
    expect(signin.status).toBe(200);
    const first = signin.body.refreshToken as string;
    expect((await call(t, 'POST', '/api/auth/refresh', { body: { refreshToken: first } })).status).toBe(200);
    expect((await call(t, 'POST', '/api/auth/refresh', { body: { refreshToken: first } })).status).toBe(401);
    const again = await call(t, 'POST', '/api/auth/signin', { body: { email, password: 'correct-horse-9' } });
    expect((await call(t, 'POST', '/api/auth/signout', { token: again.body.accessToken })).status).toBeLessThan(300);

    const page = await logs('/api/logs/auth?limit=50');
    const mine = page.body.logs.filter(
      (l: any) =>
        l.body.email === email ||
        l.body.userId === up.body.user.id ||
        l.eventMessage.startsWith('refresh') ||
        l.eventMessage === 'sign-out',
    );
    const messages = mine.map((l: any) => l.eventMessage).reverse();
    expect(messages).toEqual([
      'sign-up',
      'sign-in failed',
      'sign-in',
      'refresh token reused: session ended',
      'sign-in',
      'sign-out',
    ]);
    const failed = mine.find((l: any) => l.eventMessage === 'sign-in failed');
    expect(failed).toMatchObject({ level: 'warn', body: { reason: 'INVALID_CREDENTIALS', method: 'password' } });
    expect(mine.find((l: any) => l.eventMessage.startsWith('refresh token reused')).level).toBe('warn');
    const text = JSON.stringify(page.body);
    for (const secret of ['correct-horse-9', 'wrong-password-1', first, signin.body.accessToken])
      expect(text).not.toContain(secret);
  });

  it('logs realtime connects and refusals', async () => {
    const user = await createTestUser(t);
    const socket = await connectSocket(t.url, user.token);
    const denied = await subscribe(socket, 'secret-room:1');
    expect(denied.ok).toBe(false);
    const refused = await refusedHandshake(t.url, 'not-a-token');
    expect(refused.data?.code).toBeTruthy();
    socket.disconnect();
    const page = await logs('/api/logs/realtime');
    const connected = page.body.logs.find((l: any) => l.eventMessage === 'connected' && l.body.userId === user.userId);
    expect(connected).toMatchObject({ level: 'info', body: { caller: 'user' } });
    expect(page.body.logs.some((l: any) => l.eventMessage === 'connection refused' && l.level === 'warn')).toBe(true);
    const sub = page.body.logs.find(
      (l: any) => l.eventMessage === 'subscription refused' && l.body.userId === user.userId,
    );
    expect(sub).toMatchObject({ level: 'warn', body: { channel: 'secret-room:1', reason: denied.error.code } });
  });

  it('pages newest first with nextCursor, and counts the total', async () => {
    for (let i = 0; i < 5; i++) await call(t, 'GET', `/api/health?page-test=${i}`);
    const one = await logs('/api/logs/api?q=page-test&limit=2');
    expect(one.body.total).toBe(5);
    expect(one.body.logs.map((l: any) => l.body.path)).toEqual(['/api/health?page-test=4', '/api/health?page-test=3']);
    const two = await logs(`/api/logs/api?q=page-test&limit=2&cursor=${one.body.nextCursor}`);
    expect(two.body.logs.map((l: any) => l.body.path)).toEqual(['/api/health?page-test=2', '/api/health?page-test=1']);
    const three = await logs(`/api/logs/api?q=page-test&limit=2&cursor=${two.body.nextCursor}`);
    expect(three.body.logs).toHaveLength(1);
    expect(three.body.nextCursor).toBeNull();
  });

  it("answers InsForge's shape and source names (what @insforge/mcp get-container-logs reads)", async () => {
    const r = await logs('/api/logs/insforge.logs?limit=3');
    expect(r.status).toBe(200);
    expect(r.body.total).toBeGreaterThan(0);
    for (const l of r.body.logs) {
      expect(Object.keys(l)).toEqual(expect.arrayContaining(['id', 'eventMessage', 'timestamp', 'body', 'source']));
      expect(l.source).toBe('api');
    }
    expect((await logs('/api/logs/postgres.logs')).status).toBe(200);
    expect((await logs('/api/logs/function.logs')).status).toBe(200);
  });

  it('searches across sources, within a time window', async () => {
    const from = new Date(Date.now() - 60_000).toISOString();
    const r = await logs(`/api/logs/search?q=sign&from=${from}&source=auth,api`);
    expect(r.status).toBe(200);
    expect(new Set(r.body.logs.map((l: any) => l.source))).toEqual(new Set(['auth', 'api']));
    const future = await logs(`/api/logs/search?from=${new Date(Date.now() + 3600_000).toISOString()}`);
    expect(future.body).toEqual({ logs: [], total: 0, nextCursor: null });
  });

  it('lists sources with counts and gives per-route, per-minute stats with percentiles', async () => {
    const sources = await logs('/api/logs/sources');
    const api = sources.body.sources.find((s: any) => s.name === 'api');
    expect(api.count).toBeGreaterThan(5);
    expect(sources.body.sources.map((s: any) => s.name)).toEqual(
      expect.arrayContaining(['auth', 'functions', 'postgres', 'realtime', 'schedules', 'webhooks']),
    );
    const stats = await logs('/api/logs/stats?route=/api/health');
    expect(stats.status).toBe(200);
    const total = stats.body.stats.reduce((n: number, s: any) => n + s.count, 0);
    expect(total).toBeGreaterThanOrEqual(5);
    const row = stats.body.stats[0];
    expect(row).toMatchObject({ method: 'GET', route: '/api/health', errors: 0 });
    expect(row.p50Ms).toBeGreaterThan(0);
    expect(row.p99Ms).toBeGreaterThanOrEqual(row.p50Ms);
  });

  it.each([
    ['/api/logs/api?level=loud', 400, 'INVALID_INPUT'],
    ['/api/logs/api?limit=0', 400, 'INVALID_INPUT'],
    ['/api/logs/api?limit=5000', 400, 'INVALID_INPUT'],
    ['/api/logs/api?from=yesterday', 400, 'INVALID_LOG_QUERY'],
    ['/api/logs/api?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', 400, 'INVALID_LOG_QUERY'],
    ['/api/logs/api?cursor=bm9wZQ', 400, 'INVALID_LOG_QUERY'],
    [`/api/logs/api?cursor=${Buffer.from('l:9999999999999999999').toString('base64url')}`, 400, 'INVALID_LOG_QUERY'],
    ['/api/logs/api?from=1', 400, 'INVALID_LOG_QUERY'],
    ['/api/logs/stats?to=not-a-time', 400, 'INVALID_LOG_QUERY'],
    ['/api/logs/search?source=nope', 404, 'LOG_SOURCE_NOT_FOUND'],
    ['/api/logs/no-such-source', 404, 'LOG_SOURCE_NOT_FOUND'],
    ['/api/logs/%27%3B%20drop', 404, 'LOG_SOURCE_NOT_FOUND'],
  ])('%s answers %i %s', async (path, status, code) => {
    const r = await logs(path);
    expect(r.status).toBe(status);
    expect(r.body).toMatchObject({ statusCode: status, error: code });
    expect(r.body.nextActions).toBeTruthy();
  });

  it('health with checks reports the log store', async () => {
    const r = await call(t, 'GET', '/api/health?checks=true');
    expect(r.body.checks.logs).toEqual({ status: 'ok', engine: 'system.logs' });
  });

  it('is for admins only', async () => {
    const user = await createTestUser(t);
    for (const path of ['/api/logs/sources', '/api/logs/api', '/api/logs/search', '/api/logs/stats']) {
      expect((await call(t, 'GET', path)).status).toBe(401);
      expect((await call(t, 'GET', path, { headers: { apikey: t.anonKey } })).status).toBe(403);
      expect((await call(t, 'GET', path, { token: user.token })).status).toBe(403);
    }
  });
});
