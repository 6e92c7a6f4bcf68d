import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { startApp, createTestUser, type TestApp } from '../helpers/app.js';
import { newAdminKey } from '../../src/auth/credentials.js';
import { sha256Hex } from '../../src/lib/crypto.js';

const probe = (app: import('fastify').FastifyInstance) => {
  app.get('/api/_probe/any', { config: { access: 'any' } }, async () => ({ ok: true }));
};

describe('rate limits (in memory)', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Behind a proxy, so tests can speak for several client IPs.
    t = await startApp(
      'embedded',
      {
        RATE_LIMIT_PLAN: 'enterprise',
        RATE_LIMIT_PER_MINUTE: '5',
        RATE_LIMIT_ADMIN_PER_MINUTE: '5',
        TRUST_PROXY: 'true',
      },
      probe,
    );
  });
  afterAll(() => t?.close());

  it('counts per caller, sends the three headers, then 429 with Retry-After', async () => {
    const a = await createTestUser(t);
    const b = await createTestUser(t);
    for (let i = 0; i < 5; i++) {
      const r = await t.fetch('/api/_probe/any', { headers: a.auth });
      expect(r.status).toBe(200);
      expect(r.headers.get('x-ratelimit-limit')).toBe('5');
      expect(r.headers.get('x-ratelimit-remaining')).toBe(String(4 - i));
      const reset = Number(r.headers.get('x-ratelimit-reset'));
      const now = Date.now() / 1000;
      expect(reset).toBeGreaterThan(now);
      expect(reset).toBeLessThanOrEqual(now + 61);
    }
    const over = await t.fetch('/api/_probe/any', { headers: a.auth });
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(over.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(await over.json()).toMatchObject({ statusCode: 429, error: 'RATE_LIMITED' });
    // Another caller has its own budget.
    expect((await t.fetch('/api/_probe/any', { headers: b.auth })).status).toBe(200);
  });

  it('never limits /api/health', async () => {
    for (let i = 0; i < 12; i++) {
      const r = await t.fetch('/api/health');
      expect(r.status).toBe(200);
      expect(r.headers.get('x-ratelimit-limit')).toBeNull();
    }
  });

  it('counts the anon key per client IP: one client using it up leaves others their budget', async () => {
    const anon = (ip: string) => t.fetch('/api/_probe/any', { headers: { apikey: t.anonKey, 'x-forwarded-for': ip } });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await anon('203.0.113.7')).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    expect((await anon('203.0.113.8')).status).toBe(200);
  });

  it('counts one admin key once, however its header is spelled', async () => {
    const spellings: Array<Record<string, string>> = [
      { 'x-api-key': t.adminKey },
      { apikey: t.adminKey },
      { authorization: `Bearer ${t.adminKey}` },
      { authorization: `bearer   ${t.adminKey}` },
      { authorization: `BEARER ${t.adminKey} ` },
    ];
    const remaining = [];
    for (const headers of spellings)
      remaining.push(
        (await t.fetch('/api/_probe/any', { headers: { ...headers, 'x-forwarded-for': '203.0.113.9' } })).headers.get(
          'x-ratelimit-remaining',
        ),
      );
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);
    const over = await t.fetch('/api/_probe/any', { headers: { authorization: `Bearer  ${t.adminKey}` } });
    expect(over.status).toBe(429);
    // The admin's 429 names the setting that raises the admin key's own limit.
    expect((await over.json()).nextActions).toMatch(/RATE_LIMIT_ADMIN_PER_MINUTE/);
  });

  it('limits unauthenticated callers by IP, bad credentials included', async () => {
    let last = 0;
    for (let i = 0; i < 7; i++)
      last = (await t.fetch('/api/_probe/any', { headers: { apikey: `anon_${'f'.repeat(64)}` } })).status;
    expect(last).toBe(429);
  });
});

describe("the admin key's own limit", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp('embedded', { RATE_LIMIT_PLAN: 'enterprise', RATE_LIMIT_PER_MINUTE: '3' }, probe);
  });
  afterAll(() => t?.close());

  it("is much higher than a user's by default, so a script and the dashboard do not lock each other out", async () => {
    for (let i = 0; i < 10; i++) {
      const r = await t.fetch('/api/_probe/any', { headers: { 'x-api-key': t.adminKey } });
      expect(r.status).toBe(200);
      expect(r.headers.get('x-ratelimit-limit')).toBe('10000');
    }
    const user = await createTestUser(t);
    const statuses: number[] = [];
    let last: Response | null = null;
    for (let i = 0; i < 4; i++) statuses.push((last = await t.fetch('/api/_probe/any', { headers: user.auth })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const body = await last!.json();
    expect(body.nextActions).toMatch(/RATE_LIMIT_PLAN/);
    expect(body.nextActions).not.toMatch(/ADMIN/);
  });
});

// Needs a Redis server: set TEST_REDIS_URL (CI does: redis://127.0.0.1:6379).
const REDIS = process.env.TEST_REDIS_URL;

describe.skipIf(!REDIS)('rate limits shared through Redis by two instances', () => {
  const adminKey = newAdminKey();
  let one: TestApp;
  let two: TestApp;
  const env = {
    RATE_LIMIT_PLAN: 'enterprise',
    RATE_LIMIT_PER_MINUTE: '6',
    RATE_LIMIT_ADMIN_PER_MINUTE: '6',
    REDIS_URL: REDIS ?? '',
    ADMIN_API_KEY: adminKey,
  };
  beforeAll(async () => {
    one = await startApp('embedded', env, probe);
    two = await startApp('embedded', env, probe);
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
    // This run's counter (its admin key is random) expires by itself; remove it anyway.
    const r = new Redis(REDIS!);
    await r.del(`plinth-rl:k:${sha256Hex(adminKey).slice(0, 32)}`);
    await r.quit();
  });

  it('one limit across both instances', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const t = i % 2 ? two : one;
      statuses.push((await t.fetch('/api/_probe/any', { headers: { 'x-api-key': adminKey } })).status);
    }
    expect(statuses.slice(0, 6)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(statuses.slice(6)).toEqual([429, 429]);
  });

  it('reports Redis in the health checks', async () => {
    const r = await one.fetch('/api/health?checks=true');
    expect((await r.json()).checks.redis).toEqual({ status: 'ok' });
  });
});
