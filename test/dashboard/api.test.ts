// The endpoints the dashboard added to the API, over HTTP on every backend: table policies, the
// SQL error position, revoking a user's sessions, AI usage per day, logs after an id, one
// bucket, the anon key, and /dashboard itself (static files, cache headers, CSP, SPA fallback).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { call } from '../helpers/http.js';
import { dashboardAt, DASHBOARD_DIR } from '../../src/http/routes/dashboard/index.js';
import { existsSync, readdirSync } from 'node:fs';

const envelope = (body: any, code: string) => {
  expect(body).toMatchObject({
    statusCode: expect.any(Number),
    error: code,
    message: expect.any(String),
    nextActions: expect.any(String),
  });
};

describe.each(backends())('dashboard endpoints on %s', (backend) => {
  let t: TestApp;
  let admin: { headers: Record<string, string> };
  const missing = mkdtempSync(path.join(tmpdir(), 'plinth-nodash-'));

  beforeAll(async () => {
    t = await startApp(backend, {}, (app) => void app.register(dashboardAt(missing), { prefix: '/unbuilt' } as never));
    admin = { headers: { 'x-api-key': t.adminKey } };
    await call(t, 'POST', '/api/database/tables', {
      ...admin,
      body: { tableName: 'notes', rlsEnabled: true, columns: [{ name: 'owner', type: 'uuid', nullable: true }] },
    });
  });
  afterAll(async () => {
    await t?.close();
    rmSync(missing, { recursive: true, force: true });
  });

  it("lists a table's policies with command, roles, using and with check", async () => {
    const empty = await call(t, 'GET', '/api/database/tables/notes/policies', admin);
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ tableName: 'notes', rlsEnabled: true, policies: [] });
    const sql = `create policy owner_rw on public.notes for update to authenticated using (owner = auth.uid()) with check (owner is not null)`;
    expect((await call(t, 'POST', '/api/database/sql', { ...admin, body: { query: sql } })).status).toBe(200);
    await call(t, 'POST', '/api/database/sql', {
      ...admin,
      body: { query: 'create policy anyone_reads on public.notes as restrictive for select using (true)' },
    });
    const r = await call(t, 'GET', '/api/database/tables/notes/policies', admin);
    expect(r.body.policies).toHaveLength(2);
    expect(r.body.policies[0]).toMatchObject({
      name: 'anyone_reads',
      command: 'SELECT',
      permissive: false,
      roles: ['public'],
      using: 'true',
      withCheck: null,
    });
    expect(r.body.policies[1]).toMatchObject({
      name: 'owner_rw',
      command: 'UPDATE',
      permissive: true,
      roles: ['authenticated'],
    });
    expect(r.body.policies[1].using).toContain('auth.uid()');
    expect(r.body.policies[1].withCheck).toContain('IS NOT NULL');
  });

  it('refuses policies of an unknown table (404) and non-admins (401)', async () => {
    envelope((await call(t, 'GET', '/api/database/tables/nope/policies', admin)).body, 'TABLE_NOT_FOUND');
    const anon = await call(t, 'GET', '/api/database/tables/notes/policies', { headers: { apikey: t.anonKey } });
    expect([401, 403]).toContain(anon.status);
  });

  it('gives a SQL error its line and column, beside the usual fields', async () => {
    const r = await call(t, 'POST', '/api/database/sql', {
      ...admin,
      body: { query: 'select 1\nfrom notes\n  wher id = 1' },
    });
    expect(r.status).toBe(400);
    envelope(r.body, 'SQL_ERROR');
    expect(r.body.position).toEqual({ line: 3, column: 8 });
    expect(r.body.message).toContain('line 3, column 8');
    const none = await call(t, 'POST', '/api/database/sql', { ...admin, body: { query: 'select 1/0' } });
    expect(none.status).toBe(400);
    expect(none.body.position).toBeUndefined();
  });

  it('revokes every session of a user: their token stops working', async () => {
    const u = await createTestUser(t);
    expect((await call(t, 'GET', '/api/auth/user', { token: u.token })).status).toBe(200);
    const r = await call(t, 'DELETE', `/api/auth/users/${u.userId}/sessions`, admin);
    expect(r.status).toBe(200);
    expect(r.body.revoked).toBe(1);
    expect((await call(t, 'GET', '/api/auth/user', { token: u.token })).status).toBe(401);
    expect((await call(t, 'DELETE', `/api/auth/users/${u.userId}/sessions`, admin)).body.revoked).toBe(0);
    envelope(
      (await call(t, 'DELETE', '/api/auth/users/00000000-0000-4000-8000-000000000000/sessions', admin)).body,
      'USER_NOT_FOUND',
    );
    expect((await call(t, 'DELETE', `/api/auth/users/${u.userId}/sessions`, { token: u.token })).status).toBe(401);
  });

  it('sums AI usage per UTC day, model and user', async () => {
    const u = await createTestUser(t, 'ai-user@example.com');
    const row = `insert into ai.usage (created_at, user_id, caller, endpoint, model, total_tokens, images, latency_ms, status)
                 values ($1, $2, $3, 'chat', $4, $5, 0, 10, 200)`;
    await t.deps.db.query(row, ['2026-03-01T10:00:00Z', u.userId, 'user', 'gpt-a', 10]);
    await t.deps.db.query(row, ['2026-03-01T23:30:00Z', u.userId, 'user', 'gpt-a', 5]);
    await t.deps.db.query(row, ['2026-03-01T12:00:00Z', null, 'admin', 'gpt-b', 7]);
    await t.deps.db.query(row, ['2026-03-02T00:10:00Z', u.userId, 'user', 'gpt-a', 1]);
    const r = await call(t, 'GET', '/api/ai/usage/daily?from=2026-03-01T00:00:00Z&to=2026-03-03T00:00:00Z', admin);
    expect(r.status).toBe(200);
    expect(r.body.days).toEqual([
      {
        day: '2026-03-01',
        model: 'gpt-a',
        userId: u.userId,
        email: 'ai-user@example.com',
        caller: 'user',
        requests: 2,
        totalTokens: 15,
        images: 0,
      },
      {
        day: '2026-03-01',
        model: 'gpt-b',
        userId: null,
        email: null,
        caller: 'admin',
        requests: 1,
        totalTokens: 7,
        images: 0,
      },
      {
        day: '2026-03-02',
        model: 'gpt-a',
        userId: u.userId,
        email: 'ai-user@example.com',
        caller: 'user',
        requests: 1,
        totalTokens: 1,
        images: 0,
      },
    ]);
    const one = await call(t, 'GET', `/api/ai/usage/daily?userId=${u.userId}&from=2026-03-02T00:00:00Z`, admin);
    expect(one.body.days).toHaveLength(1);
    expect((await call(t, 'GET', '/api/ai/usage/daily?from=yesterday', admin)).status).toBe(400);
  });

  it('follows function logs with ?after=<id>', async () => {
    const code =
      'export default async (req) => { console.log("hit " + new URL(req.url).searchParams.get("n")); return new Response("ok"); }';
    expect((await call(t, 'POST', '/api/functions', { ...admin, body: { name: 'logger', code } })).status).toBe(201);
    await t.fetch('/functions/logger?n=1').then((r) => r.text());
    await t.fetch('/functions/logger?n=2').then((r) => r.text());
    const all = (await call(t, 'GET', '/api/functions/logger/logs', admin)).body.logs;
    const hits = all.filter((l: any) => l.message.startsWith('hit'));
    expect(hits.map((l: any) => l.message)).toEqual(['hit 1', 'hit 2']);
    expect(hits[1].id).toBeGreaterThan(hits[0].id);
    const after = (await call(t, 'GET', `/api/functions/logger/logs?after=${hits[0].id}`, admin)).body.logs;
    expect(after.map((l: any) => l.message)).toEqual(['hit 2']);
    await t.fetch('/functions/logger?n=3').then((r) => r.text());
    const newer = (await call(t, 'GET', `/api/functions/logger/logs?after=${hits[1].id}`, admin)).body.logs;
    expect(newer.map((l: any) => l.message)).toEqual(['hit 3']);
    expect((await call(t, 'GET', '/api/functions/logger/logs?after=-1', admin)).status).toBe(400);
  });

  it('shows one bucket with its visibility', async () => {
    await call(t, 'POST', '/api/storage/buckets', { ...admin, body: { bucketName: 'pics', isPublic: false } });
    expect((await call(t, 'GET', '/api/storage/buckets/pics', admin)).body).toEqual({
      bucket: 'pics',
      isPublic: false,
    });
    envelope((await call(t, 'GET', '/api/storage/buckets/nope', admin)).body, 'BUCKET_NOT_FOUND');
  });

  it('gives the admin the anon key, nobody else', async () => {
    const r = await call(t, 'GET', '/api/keys/anon', admin);
    expect(r.body).toEqual({ anonKey: t.anonKey, header: 'apikey' });
    expect((await call(t, 'GET', '/api/keys/anon', { headers: { apikey: t.anonKey } })).status).toBe(403);
    envelope(
      (await call(t, 'GET', '/api/keys/anon', { headers: { 'x-api-key': 'ik_wrong' } })).body,
      'INVALID_API_KEY',
    );
  });

  describe('/dashboard', () => {
    const built = existsSync(path.join(DASHBOARD_DIR, 'index.html'));
    it.runIf(built)('serves index.html with a self-only CSP, and the SPA paths too', async () => {
      for (const p of ['/dashboard/', '/dashboard/tables/notes', '/dashboard/functions/x/y']) {
        const r = await t.fetch(p);
        expect(r.status).toBe(200);
        expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
        expect(r.headers.get('cache-control')).toBe('no-cache');
        expect(r.headers.get('content-security-policy')).toMatch(/default-src 'self'.*script-src 'self'/);
        expect(await r.text()).toContain('<div id="app">');
      }
      const bare = await t.fetch('/dashboard', { redirect: 'manual' });
      expect([200, 301]).toContain(bare.status);
    });
    it.runIf(built)(
      'serves hashed assets with their type and a year of caching; a missing asset is a 404 envelope',
      async () => {
        const js = readdirSync(path.join(DASHBOARD_DIR, 'assets')).find((f) => f.endsWith('.js'))!;
        const r = await t.fetch(`/dashboard/assets/${js}`);
        expect(r.status).toBe(200);
        expect(r.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
        expect(r.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
        const gone = await call(t, 'GET', '/dashboard/assets/nope-123.js');
        expect(gone.status).toBe(404);
        envelope(gone.body, 'NOT_FOUND');
        const escaped = await t.fetch('/dashboard/assets/..%2f..%2f..%2fpackage.json');
        expect(escaped.status).toBe(404);
      },
    );
    it.runIf(built)('is not rate limited: the files are static', async () => {
      const limited = await startApp(backend, {
        RATE_LIMIT_PLAN: 'enterprise',
        RATE_LIMIT_PER_MINUTE: '2',
        RATE_LIMIT_ADMIN_PER_MINUTE: '2',
      });
      try {
        for (let i = 0; i < 4; i++) expect((await limited.fetch('/dashboard/')).status).toBe(200);
        const api = [];
        for (let i = 0; i < 3; i++)
          api.push((await limited.fetch('/api/keys/anon', { headers: { 'x-api-key': limited.adminKey } })).status);
        expect(api).toEqual([200, 200, 429]);
      } finally {
        await limited.close();
      }
    });
    it.runIf(built)('sends GET / to the dashboard', async () => {
      const r = await t.fetch('/', { redirect: 'manual' });
      expect(r.status).toBe(302);
      expect(r.headers.get('location')).toBe('/dashboard/');
      expect((await t.fetch('/')).url).toMatch(/\/dashboard\/$/);
    });
    it('answers GET / with a 404 envelope that says how to build the dashboard when it is missing', async () => {
      const r = await call(t, 'GET', '/unbuilt/');
      expect(r.status).toBe(404);
      envelope(r.body, 'ROUTE_NOT_FOUND');
      expect(r.body.nextActions).toContain('npm run build');
    });
    it('answers 503 with the envelope when the build is missing', async () => {
      const r = await call(t, 'GET', '/unbuilt/dashboard/tables');
      expect(r.status).toBe(503);
      envelope(r.body, 'DASHBOARD_NOT_BUILT');
      expect(r.body.nextActions).toContain('npm run build');
    });
  });
});
