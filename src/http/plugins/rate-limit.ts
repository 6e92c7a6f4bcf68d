import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { Config } from '../../config/index.js';
import { MemoryCounter, RedisCounter } from '../../lib/counter.js';
import { callerKey, limitHeaders, RateLimiter } from '../limiter.js';

/** The rate limiter of this config: null when limits are off (RATE_LIMIT_PLAN=off). */
export function createRateLimiter(cfg: Readonly<Config['rateLimit']>, redis: Redis | null): RateLimiter | null {
  if (cfg.plan === 'off') return null;
  return new RateLimiter(cfg, redis ? new RedisCounter(redis, 'plinth-rl:') : new MemoryCounter());
}

/**
 * Counts every request of every route registered after it, except routes with
 * `config: { rateLimit: false }` (health, metrics, the dashboard's files, CORS preflights): a
 * route's own onRequest hook, so it runs after the global hooks (the caller's identity first).
 */
export function registerRateLimit(app: FastifyInstance, limiter: RateLimiter | null): void {
  if (!limiter) return;
  const hook = async (request: FastifyRequest, reply: FastifyReply) => {
    const counted = await limiter.count(callerKey(request.identity, request.headers, request.ip));
    // The store (Redis) failed: served uncounted, and no headers claim a budget.
    if (!counted) return;
    reply.headers(limitHeaders(counted));
    if (counted.exceeded) throw limiter.refusal(counted);
  };
  app.addHook('onRoute', (route) => {
    if ((route.config as { rateLimit?: unknown } | undefined)?.rateLimit === false) return;
    const own = route.onRequest;
    route.onRequest = own === undefined ? [hook] : Array.isArray(own) ? [...own, hook] : [own, hook];
  });
}
