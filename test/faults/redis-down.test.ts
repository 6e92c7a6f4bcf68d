// Redis (REDIS_URL, the shared rate-limit counters) stopped under load: requests are still
// served (rate limits fail open, see docs/decisions.md) without rate-limit headers, sign-in
// keeps its brute-force guard in this process, health reports Redis down (200: the instance
// serves), and counting resumes when Redis is back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { prepare, runLoad, tally, type LoadTarget } from './load.js';
import { hasCommand, startRedis, type TestRedis } from './procs.js';
import { call } from '../helpers/http.js';
import { until } from '../helpers/until.js';

const why = hasCommand('redis-server') ? null : 'no redis-server on this machine (apt-get install redis-server)';
if (why) console.warn(`skipping the Redis fault: ${why}`);

describe.skipIf(why !== null)('Redis stopped under load', () => {
  let redis: TestRedis;
  let t: TestApp;
  let target: LoadTarget;
  const health = () => call(t, 'GET', '/api/health?checks=true', { headers: { 'x-api-key': t.adminKey } });

  beforeAll(async () => {
    redis = await startRedis();
    t = await startApp(undefined, { REDIS_URL: redis.url, RATE_LIMIT_PLAN: 'pro' });
    target = await prepare({ url: t.url, adminKey: t.adminKey });
  });
  afterAll(async () => {
    await t?.close();
    await redis?.stop();
  });

  it('keeps serving with rate limits open, reports Redis down, and counts again once it is back', async () => {
    const limitOf = async () =>
      (await call(t, 'GET', '/api/database/tables', { headers: { 'x-api-key': t.adminKey } })).headers.get(
        'x-ratelimit-remaining',
      );
    const before = Number(await limitOf());
    expect(Number(await limitOf())).toBe(before - 1);
    expect((await health()).body.checks.redis).toEqual({ status: 'ok' });

    const load = runLoad(target, 3);
    await until(async () => load.answers.length >= 12, 30_000, 'load to run');
    const stoppedAt = Date.now();
    await redis.stop();
    await until(
      async () => load.answers.filter((a) => a.at > stoppedAt + 200).length >= 30,
      30_000,
      'load while Redis is down',
    );

    // Health says which part is down; the instance itself still serves.
    const h = await health();
    expect(h.body.checks.redis).toMatchObject({ status: 'down' });
    expect(h.body.checks.database).toMatchObject({ status: 'ok' });
    expect(h.status).toBe(200);
    // Nothing is counted meanwhile, so no rate-limit headers claim a budget.
    const uncounted = await call(t, 'GET', '/api/database/tables', { headers: { 'x-api-key': t.adminKey } });
    expect(uncounted.status).toBe(200);
    for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'])
      expect(uncounted.headers.get(h), h).toBeNull();
    // Sign-in attempts still get their answer (the guard counts in this process meanwhile).
    const signin = await call(t, 'POST', '/api/auth/signin', {
      body: { email: 'nobody@example.com', password: 'wrong-password-1' },
    });
    expect(signin.status).toBe(401);

    await redis.start();
    const backAt = Date.now();
    await until(async () => (await health()).body.checks.redis?.status === 'ok', 10_000, 'health to see Redis again');
    await until(async () => load.answers.filter((a) => a.at > backAt).length >= 12, 30_000, 'load after Redis is back');
    const answers = await load.stop();
    const summary = JSON.stringify(tally(answers));
    const during = answers.filter((a) => a.at > stoppedAt + 200 && a.at < backAt);
    expect(during.length).toBeGreaterThan(0);
    expect(
      during.filter((a) => a.status < 200 || a.status >= 300),
      summary,
    ).toEqual([]);
    expect(
      answers.filter((a) => a.status < 200 || a.status >= 300),
      summary,
    ).toEqual([]);
    // Counting resumes in the new (empty) Redis.
    const a = Number(await limitOf());
    expect(Number(await limitOf())).toBe(a - 1);
  }, 90_000);
});
