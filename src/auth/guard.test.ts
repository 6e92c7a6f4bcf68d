import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { AppError } from '../errors/index.js';
import { MemoryCounter, RedisCounter, type Counter } from '../lib/counter.js';
import { AuthGuard } from './guard.js';

const LIMITS = {
  perEmail: { max: 3, windowMs: 60_000 },
  perIp: { max: 5, windowMs: 60_000 },
  mailsPerEmail: { max: 2, windowMs: 60_000 },
  mfaPerUser: { max: 3, windowMs: 60_000 },
  anonymousPerIp: { max: 2, windowMs: 60_000 },
};

async function code(p: Promise<unknown>): Promise<string | null> {
  try {
    await p;
    return null;
  } catch (err) {
    return err instanceof AppError ? err.code : 'OTHER';
  }
}

function guardSuite(name: string, make: () => Counter) {
  describe(`AuthGuard on ${name}`, () => {
    const run = Math.random().toString(36).slice(2);
    const email = (s: string) => `${s}-${run}@example.com`;

    it('blocks an email after the limit of failures, with Retry-After', async () => {
      const g = new AuthGuard(make(), LIMITS);
      const e = email('a');
      for (let i = 0; i < 3; i++) {
        expect(await code(g.checkSignIn(e, `1.1.1.${i}`))).toBeNull();
        await g.signInFailed(e, `1.1.1.${i}`);
      }
      try {
        await g.checkSignIn(e, '9.9.9.9');
        expect.unreachable();
      } catch (err) {
        expect((err as AppError).code).toBe('RATE_LIMITED');
        expect(Number((err as AppError).headers['retry-after'])).toBeGreaterThan(0);
        expect(Number((err as AppError).headers['retry-after'])).toBeLessThanOrEqual(60);
      }
      expect(await code(g.checkSignIn(email('b'), '9.9.9.9'))).toBeNull();
    });

    it('blocks an IP after its limit across emails; success clears only the email', async () => {
      const g = new AuthGuard(make(), LIMITS);
      const ip = `2.2.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
      for (let i = 0; i < 5; i++) await g.signInFailed(email(`ip${i}`), ip);
      expect(await code(g.checkSignIn(email('fresh'), ip))).toBe('RATE_LIMITED');
      const e = email('clear');
      for (let i = 0; i < 3; i++) await g.signInFailed(e, '3.3.3.3');
      expect(await code(g.checkSignIn(e, '3.3.3.4'))).toBe('RATE_LIMITED');
      await g.signInSucceeded(e);
      expect(await code(g.checkSignIn(e, '3.3.3.4'))).toBeNull();
    });

    it('counts wrong MFA codes per user, and anonymous sign-ins per IP', async () => {
      const g = new AuthGuard(make(), LIMITS);
      const user = `u-${run}`;
      for (let i = 0; i < 3; i++) {
        expect(await code(g.checkMfa(user))).toBeNull();
        await g.mfaFailed(user);
      }
      expect(await code(g.checkMfa(user))).toBe('RATE_LIMITED');
      expect(await code(g.checkMfa(`${user}-other`))).toBeNull();
      const ip = `4.4.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
      expect(await code(g.anonymousSignIn(ip))).toBeNull();
      expect(await code(g.anonymousSignIn(ip))).toBeNull();
      expect(await code(g.anonymousSignIn(ip))).toBe('RATE_LIMITED');
    });

    it('counts code emails per address', async () => {
      const g = new AuthGuard(make(), LIMITS);
      const e = email('mail');
      expect(await code(g.mailSent(e))).toBeNull();
      expect(await code(g.mailSent(e))).toBeNull();
      expect(await code(g.mailSent(e))).toBe('RATE_LIMITED');
      expect(await code(g.mailSent(email('mail2')))).toBeNull();
    });

    it('opens a new window when the old one has passed', async () => {
      const c = make();
      const k = `win-${run}`;
      expect((await c.hit(k, 150)).count).toBe(1);
      expect((await c.hit(k, 150)).count).toBe(2);
      expect((await c.peek(k)).count).toBe(2);
      await new Promise((r) => setTimeout(r, 250));
      expect((await c.peek(k)).count).toBe(0);
      expect((await c.hit(k, 150)).count).toBe(1);
      await c.clear(k);
      expect((await c.peek(k)).count).toBe(0);
    });
  });
}

guardSuite('memory', () => new MemoryCounter());

describe('MemoryCounter', () => {
  it('stays bounded under a flood of keys', async () => {
    const c = new MemoryCounter(100);
    for (let i = 0; i < 1000; i++) await c.hit(`k${i}`, 60_000);
    expect((await c.peek('k999')).count).toBe(1);
    expect((await c.peek('k0')).count).toBe(0);
  });
});

// Needs a Redis server: set TEST_REDIS_URL (CI does).
const REDIS = process.env.TEST_REDIS_URL;
if (REDIS) {
  const clients: Redis[] = [];
  const prefix = `plinth-auth-test-${Math.random().toString(36).slice(2)}:`;
  guardSuite('Redis', () => {
    const r = new Redis(REDIS);
    clients.push(r);
    return new RedisCounter(r, prefix);
  });
  it('Redis counters are shared between two clients (two API instances)', async () => {
    const a = new Redis(REDIS);
    const b = new Redis(REDIS);
    clients.push(a, b);
    const ga = new AuthGuard(new RedisCounter(a, prefix), LIMITS);
    const gb = new AuthGuard(new RedisCounter(b, prefix), LIMITS);
    const e = `shared-${Math.random()}@example.com`;
    await ga.signInFailed(e, '4.4.4.1');
    await gb.signInFailed(e, '4.4.4.2');
    await ga.signInFailed(e, '4.4.4.3');
    expect(await code(gb.checkSignIn(e, '4.4.4.4'))).toBe('RATE_LIMITED');
  });
  afterAll(async () => {
    const r = clients[0] ?? new Redis(REDIS);
    const keys = await r.keys(`${prefix}*`);
    if (keys.length) await r.del(...keys);
    await Promise.all(clients.map((c) => c.quit()));
  });
}
