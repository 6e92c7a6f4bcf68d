import type { IncomingHttpHeaders } from 'node:http';
import type { Config } from '../config/index.js';
import { presentedCredential, type Identity } from '../auth/identity.js';
import { AppError } from '../errors/index.js';
import type { Counter } from '../lib/counter.js';
import { sha256Hex } from '../lib/crypto.js';

const WINDOW_MS = 60_000;

/** One request counted: what its rate-limit headers say, and whether it is over the limit. */
export interface Counted {
  max: number;
  remaining: number;
  /** Seconds until the window resets (at least 1). */
  resetSeconds: number;
  exceeded: boolean;
  /** The caller counted by the admin key's limit. */
  admin: boolean;
}

/**
 * The caller a limit counts for: the user, else the admin credential (hashed, as the identity
 * resolver reads it, so no spelling of the header makes a fresh count), else the IP. The anon
 * key counts by IP: it is public and every anonymous client of an app sends it, so one count
 * for it would let one client use up everyone's.
 */
export function callerKey(
  identity: Identity | undefined,
  headers: IncomingHttpHeaders,
  ip: string | undefined,
): string {
  if (identity?.kind === 'user') return `u:${identity.userId}`;
  if (identity?.kind === 'admin') {
    const c = presentedCredential(headers);
    return `k:${sha256Hex(c !== null && c !== 'malformed' ? c.value : '').slice(0, 32)}`;
  }
  return `ip:${ip}`;
}

/**
 * Per-caller limits over a 60 s window, counted in `lib/counter.ts` (Redis with REDIS_URL, so
 * every instance shares one count; else this process). Fastify's routes (plugins/rate-limit.ts)
 * and the front lane count through the same limiter, so a caller has one budget whichever
 * answers. Redis down: nothing is counted and the request is served (fail open,
 * docs/decisions.md); health reports Redis down meanwhile.
 */
export class RateLimiter {
  constructor(
    private readonly cfg: Readonly<Config['rateLimit']>,
    private readonly counter: Counter,
  ) {}

  /** Counts one request of `key` (from `callerKey`); null when the store failed and nothing was counted. */
  async count(key: string): Promise<Counted | null> {
    const admin = key.startsWith('k:');
    // The admin key has its own, much higher limit: a seeding script and the dashboard share it.
    const max = admin ? this.cfg.adminPerMinute : this.cfg.perMinute;
    let hit: { count: number; resetMs: number };
    try {
      hit = await this.counter.hit(key, WINDOW_MS);
    } catch {
      return null;
    }
    return {
      max,
      remaining: Math.max(0, max - hit.count),
      resetSeconds: Math.max(1, Math.ceil(hit.resetMs / 1000)),
      exceeded: hit.count > max,
      admin,
    };
  }

  /** The answer to a request over its limit: 429 RATE_LIMITED, with what to do next. */
  refusal(c: Counted): AppError {
    const after = c.resetSeconds === 1 ? '1 second' : `${c.resetSeconds} seconds`;
    return new AppError('RATE_LIMITED', {
      message: `Rate limit of ${c.max} requests per minute exceeded; retry in ${after}.`,
      nextActions: c.admin
        ? `Wait for the number of seconds in the Retry-After header; the operator can raise the admin key's limit with RATE_LIMIT_ADMIN_PER_MINUTE (now ${this.cfg.adminPerMinute}).`
        : `Wait for the number of seconds in the Retry-After header; the operator can raise the limit with RATE_LIMIT_PLAN (free 100, pro 1000, enterprise RATE_LIMIT_PER_MINUTE; now ${this.cfg.perMinute}).`,
    });
  }
}

/**
 * The headers of a counted answer: the limit, what is left, and the window's reset as a unix
 * time (seconds); on a 429 also Retry-After in seconds.
 */
export function limitHeaders(c: Counted): Record<string, number> {
  const headers: Record<string, number> = {
    'x-ratelimit-limit': c.max,
    'x-ratelimit-remaining': c.remaining,
    'x-ratelimit-reset': Math.floor(Date.now() / 1000) + c.resetSeconds,
  };
  if (c.exceeded) headers['retry-after'] = c.resetSeconds;
  return headers;
}

/**
 * Counts a request the front lane answers (http/lanes/) as the route hook (plugins/rate-limit.ts)
 * does: its limit headers added to `out`, RATE_LIMITED thrown past the limit; nothing without a
 * limiter, or when its store failed (served uncounted, no headers claim a budget).
 */
export async function countInto(limiter: RateLimiter | null, key: string, out: Record<string, unknown>): Promise<void> {
  const counted = limiter ? await limiter.count(key) : null;
  if (!counted) return;
  Object.assign(out, limitHeaders(counted));
  if (counted.exceeded) throw limiter!.refusal(counted);
}
