import type { FastifyInstance, FastifyRequest } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import type { Config } from '../../config/index.js';
import { presentedCredential } from '../../auth/identity.js';
import { AppError } from '../../errors/index.js';
import { sha256Hex } from '../../lib/crypto.js';

const RESET = 'x-ratelimit-reset';
const COUNT_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', RESET];

/**
 * The caller a limit counts for: the user, else the admin credential (hashed, as the identity
 * resolver reads it, so no spelling of the header makes a fresh count), else the IP. The anon
 * key counts by IP: it is public and every anonymous client of an app sends it, so one count
 * for it would let one client use up everyone's.
 */
export function callerKey(request: FastifyRequest): string {
  const id = request.identity;
  if (id?.kind === 'user') return `u:${id.userId}`;
  if (id?.kind === 'admin') {
    const c = presentedCredential(request.headers);
    return `k:${sha256Hex(c !== null && c !== 'malformed' ? c.value : '').slice(0, 32)}`;
  }
  return `ip:${request.ip}`;
}

/**
 * Per-caller limits over a 60 s window (in Redis when configured, so every instance shares
 * one count). Routes opt out with `config: { rateLimit: false }` (health does).
 */
export async function registerRateLimit(
  app: FastifyInstance,
  cfg: Readonly<Config['rateLimit']>,
  redis: Redis | null,
): Promise<void> {
  if (cfg.plan === 'off') return;
  await app.register(rateLimit, {
    global: true,
    // The admin key has its own, much higher limit: a seeding script and the dashboard share it.
    max: (_req, key) => (key.startsWith('k:') ? cfg.adminPerMinute : cfg.perMinute),
    timeWindow: 60_000,
    hook: 'onRequest', // runs after the identity hook, which is registered first
    keyGenerator: callerKey,
    nameSpace: 'plinth-rl:',
    ...(redis ? { redis } : {}),
    // Redis down: fail open (serve without counting) rather than refuse every request; see
    // docs/decisions.md. Health reports Redis down meanwhile.
    skipOnError: true,
    errorResponseBuilder: (req, ctx) =>
      new AppError('RATE_LIMITED', {
        message: `Rate limit of ${ctx.max} requests per minute exceeded; retry in ${ctx.after}.`,
        nextActions:
          req.identity?.kind === 'admin'
            ? `Wait for the number of seconds in the Retry-After header; the operator can raise the admin key's limit with RATE_LIMIT_ADMIN_PER_MINUTE (now ${cfg.adminPerMinute}).`
            : `Wait for the number of seconds in the Retry-After header; the operator can raise the limit with RATE_LIMIT_PLAN (free 100, pro 1000, enterprise RATE_LIMIT_PER_MINUTE; now ${cfg.perMinute}).`,
      }),
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    const left = reply.getHeader(RESET);
    if (left !== undefined) {
      if (Number(left) > 0) {
        // The plugin sends seconds until reset; the contract is a unix timestamp.
        reply.header(RESET, Math.floor(Date.now() / 1000) + Number(left));
      } else {
        // An open window always has time left: 0 means the store (Redis) failed and nothing was
        // counted. Headers that claimed a full budget would lie, so there are none.
        for (const h of COUNT_HEADERS) reply.removeHeader(h);
      }
    }
    done(null, payload);
  });
}
