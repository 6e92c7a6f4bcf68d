import type { Redis } from 'ioredis';
import { AppError } from '../errors/index.js';
import { sha256Hex } from '../lib/crypto.js';

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
  readonly #windows = new Map<string, { count: number; resetAt: number }>();
  constructor(private readonly maxKeys = 100_000) {}

  async hit(key: string, windowMs: number) {
    const now = Date.now();
    let w = this.#windows.get(key);
    if (!w || w.resetAt <= now) {
      if (this.#windows.size >= this.maxKeys) this.#sweep(now);
      w = { count: 0, resetAt: now + windowMs };
      this.#windows.set(key, w);
    }
    w.count++;
    return { count: w.count, resetMs: w.resetAt - now };
  }

  async peek(key: string) {
    const now = Date.now();
    const w = this.#windows.get(key);
    return !w || w.resetAt <= now ? { count: 0, resetMs: 0 } : { count: w.count, resetMs: w.resetAt - now };
  }

  async clear(key: string) {
    this.#windows.delete(key);
  }

  #sweep(now: number) {
    for (const [k, w] of this.#windows) if (w.resetAt <= now) this.#windows.delete(k);
    // Still full of live windows: drop the oldest entries (Map keeps insertion order).
    for (const k of this.#windows.keys()) {
      if (this.#windows.size < this.maxKeys) break;
      this.#windows.delete(k);
    }
  }
}

/** Counters in Redis (REDIS_URL), so every API instance sees the same counts. */
export class RedisCounter implements Counter {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'plinth-auth:',
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

/** A limit: at most `max` events per `windowMs`. */
export interface Limit {
  max: number;
  windowMs: number;
}

export interface GuardLimits {
  /** Failed sign-ins per email address (from anywhere). */
  perEmail: Limit;
  /** Failed sign-ins per client IP (any email). */
  perIp: Limit;
  /** Emails with codes sent per address (verification and reset). */
  mailsPerEmail: Limit;
}

export const DEFAULT_GUARD_LIMITS: GuardLimits = {
  perEmail: { max: 10, windowMs: 15 * 60_000 },
  perIp: { max: 50, windowMs: 15 * 60_000 },
  mailsPerEmail: { max: 5, windowMs: 15 * 60_000 },
};

// Keys hash the email so Redis and memory never hold addresses in clear.
const emailKey = (kind: string, email: string) => `${kind}:e:${sha256Hex(email).slice(0, 32)}`;
const ipKey = (ip: string) => `signin:ip:${ip}`;

function tooMany(resetMs: number, what: string): AppError {
  const seconds = Math.max(1, Math.ceil(resetMs / 1000));
  return new AppError('RATE_LIMITED', {
    message: `Too many ${what}; try again in ${seconds} seconds.`,
    headers: { 'retry-after': String(seconds) },
  });
}

/**
 * Brute-force guard on top of the global rate limit: counts failed sign-ins per email and
 * per IP, and code emails per address. Blocked callers get 429 before any password check.
 */
export class AuthGuard {
  constructor(
    private readonly counter: Counter,
    private readonly limits: GuardLimits = DEFAULT_GUARD_LIMITS,
  ) {}

  /** Throws RATE_LIMITED when this email or IP has failed too often. */
  async checkSignIn(email: string, ip: string): Promise<void> {
    const [byEmail, byIp] = await Promise.all([
      this.counter.peek(emailKey('signin', email)),
      this.counter.peek(ipKey(ip)),
    ]);
    if (byEmail.count >= this.limits.perEmail.max) throw tooMany(byEmail.resetMs, 'failed sign-ins for this email');
    if (byIp.count >= this.limits.perIp.max) throw tooMany(byIp.resetMs, 'failed sign-ins from this address');
  }

  async signInFailed(email: string, ip: string): Promise<void> {
    await Promise.all([
      this.counter.hit(emailKey('signin', email), this.limits.perEmail.windowMs),
      this.counter.hit(ipKey(ip), this.limits.perIp.windowMs),
    ]);
  }

  /** A successful sign-in forgives the email's earlier failures (not the IP's). */
  async signInSucceeded(email: string): Promise<void> {
    await this.counter.clear(emailKey('signin', email));
  }

  /** Counts one code email to this address; throws RATE_LIMITED past the limit. */
  async mailSent(email: string): Promise<void> {
    const { count, resetMs } = await this.counter.hit(emailKey('mail', email), this.limits.mailsPerEmail.windowMs);
    if (count > this.limits.mailsPerEmail.max) throw tooMany(resetMs, 'emails to this address');
  }
}
