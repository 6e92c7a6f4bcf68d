import type { Redis } from 'ioredis';

/** Fixed-window counters, shared through Redis across instances or kept in this process. */
export interface Counter {
  /** Adds one to `key`'s window (opened now if none is open); returns the new count. */
  hit(key: string, windowMs: number): Promise<{ count: number; resetMs: number }>;
  /** The current count and ms until the window resets (0, 0 when no window is open). */
  peek(key: string): Promise<{ count: number; resetMs: number }>;
  clear(key: string): Promise<void>;
}

/** In-process counters (single instance). Bounded: old windows are swept as new keys come. */
export class MemoryCounter implements Counter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  constructor(private readonly maxKeys = 100_000) {}

  async hit(key: string, windowMs: number) {
    const now = Date.now();
    let w = this.windows.get(key);
    if (!w || w.resetAt <= now) {
      if (this.windows.size >= this.maxKeys) this.sweep(now);
      w = { count: 0, resetAt: now + windowMs };
      this.windows.set(key, w);
    }
    w.count++;
    return { count: w.count, resetMs: w.resetAt - now };
  }

  async peek(key: string) {
    const now = Date.now();
    const w = this.windows.get(key);
    return !w || w.resetAt <= now ? { count: 0, resetMs: 0 } : { count: w.count, resetMs: w.resetAt - now };
  }

  async clear(key: string) {
    this.windows.delete(key);
  }

  private sweep(now: number) {
    for (const [k, w] of this.windows) if (w.resetAt <= now) this.windows.delete(k);
    // Still full of live windows: drop the oldest entries (Map keeps insertion order).
    for (const k of this.windows.keys()) {
      if (this.windows.size < this.maxKeys) break;
      this.windows.delete(k);
    }
  }
}

/** Counters in Redis (REDIS_URL), so every API instance sees the same counts. */
export class RedisCounter implements Counter {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async hit(key: string, windowMs: number) {
    const k = this.prefix + key;
    // SET NX opens the window with its expiry; INCR then counts in it.
    const res = await this.redis.multi().set(k, '0', 'PX', windowMs, 'NX').incr(k).pttl(k).exec();
    const count = Number(res?.[1]?.[1] ?? 0);
    const ttl = Number(res?.[2]?.[1] ?? windowMs);
    return { count, resetMs: ttl > 0 ? ttl : windowMs };
  }

  async peek(key: string) {
    const k = this.prefix + key;
    const res = await this.redis.multi().get(k).pttl(k).exec();
    const count = Number(res?.[0]?.[1] ?? 0);
    const ttl = Number(res?.[1]?.[1] ?? 0);
    return ttl > 0 ? { count, resetMs: ttl } : { count: 0, resetMs: 0 };
  }

  async clear(key: string) {
    await this.redis.del(this.prefix + key);
  }
}

/**
 * The shared counter while it answers, else this process's own: when Redis is down, the
 * sign-in guard keeps counting per instance instead of failing every sign-in or none.
 */
export class FallbackCounter implements Counter {
  constructor(
    private readonly primary: Counter,
    private readonly local: Counter,
  ) {}

  hit(key: string, windowMs: number) {
    return this.primary.hit(key, windowMs).catch(() => this.local.hit(key, windowMs));
  }

  peek(key: string) {
    return this.primary.peek(key).catch(() => this.local.peek(key));
  }

  async clear(key: string) {
    await Promise.all([this.primary.clear(key).catch(() => {}), this.local.clear(key)]);
  }
}
