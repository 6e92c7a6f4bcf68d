import { describe, expect, it } from 'vitest';
import type { Counter } from '../lib/counter.js';
import { MemoryCounter } from '../lib/counter.js';
import { callerKey, limitHeaders, RateLimiter } from './limiter.js';

const cfg = { plan: 'enterprise', perMinute: 2, adminPerMinute: 3, redisUrl: null } as const;

describe('RateLimiter', () => {
  it('counts per key against the plan, the admin key against its own limit', async () => {
    const l = new RateLimiter(cfg, new MemoryCounter());
    const seen = [];
    for (let i = 0; i < 3; i++) seen.push(await l.count('u:a'));
    expect(seen.map((c) => [c?.remaining, c?.exceeded])).toEqual([
      [1, false],
      [0, false],
      [0, true],
    ]);
    expect((await l.count('u:b'))?.remaining).toBe(1);
    const admin = await l.count('k:abc');
    expect([admin?.max, admin?.admin]).toEqual([3, true]);
    const refusal = l.refusal(seen[2]!);
    expect([refusal.code, refusal.message]).toEqual([
      'RATE_LIMITED',
      expect.stringMatching(/^Rate limit of 2 requests per minute exceeded; retry in \d+ seconds\.$/),
    ]);
  });

  it('counts nothing when the store fails (fail open)', async () => {
    const broken: Counter = {
      hit: () => Promise.reject(new Error('down')),
      peek: () => Promise.reject(new Error('down')),
      clear: () => Promise.reject(new Error('down')),
    };
    expect(await new RateLimiter(cfg, broken).count('u:a')).toBeNull();
  });

  it('sends the reset as a unix time and Retry-After only when over', () => {
    const now = Math.floor(Date.now() / 1000);
    const under = limitHeaders({ max: 5, remaining: 4, resetSeconds: 60, exceeded: false, admin: false });
    expect(under['x-ratelimit-reset']).toBeGreaterThanOrEqual(now + 60);
    expect(under['retry-after']).toBeUndefined();
    expect(limitHeaders({ max: 5, remaining: 0, resetSeconds: 7, exceeded: true, admin: false })['retry-after']).toBe(
      7,
    );
  });

  it('keys users by id, the anon key and no credential by IP', () => {
    expect(callerKey({ kind: 'user', userId: 'x', email: 'e', role: 'authenticated' } as never, {}, '1.2.3.4')).toBe(
      'u:x',
    );
    expect(callerKey({ kind: 'anon' } as never, {}, '1.2.3.4')).toBe('ip:1.2.3.4');
    expect(callerKey(undefined, {}, '::1')).toBe('ip:::1');
  });
});
