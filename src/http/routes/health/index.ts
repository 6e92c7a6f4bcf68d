import { Type } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger } from 'fastify';
import type { Deps } from '../../../deps.js';
import type { RoutePlugin } from '../../types.js';

/**
 * The InsForge API level Plinth implements, answered as `version`: InsForge's clients (its MCP
 * server hides tools below 1.5.1, and reads older levels as legacy) compare it with their
 * own minimums. Plinth's own release number is `plinthVersion` (docs/mcp.md).
 */
export const INSFORGE_API_LEVEL = '1.5.1';

const Health = Type.Object({
  status: Type.String(),
  service: Type.String(),
  version: Type.String({ description: 'The InsForge API level this server implements' }),
  plinthVersion: Type.String({ description: "Plinth's release" }),
  timestamp: Type.String({ format: 'date-time' }),
  checks: Type.Optional(Type.Record(Type.String(), Type.Object({ status: Type.String(), message: Type.Optional(Type.String()), engine: Type.Optional(Type.String()) }))),
});

const CHECK_TIMEOUT_MS = 3000;

function withTimeout(p: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<void>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timed out')), CHECK_TIMEOUT_MS);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** GET /api/health: never touches the database unless `?checks=true`; never rate limited. */
export const healthRoutes: RoutePlugin = async (app, { deps }) => {
  const base = { service: 'plinth', version: INSFORGE_API_LEVEL, plinthVersion: deps.version };
  app.get(
    '/api/health',
    {
      config: { access: 'open', rateLimit: false },
      schema: {
        tags: ['health'],
        summary: 'Liveness; with checks=true also readiness of database, storage and function runtime',
        querystring: Type.Object({ checks: Type.Optional(Type.Boolean()) }),
        response: { 200: Health, 503: Health },
      },
    },
    (request, reply) => {
      // Plain liveness answers synchronously: no promise on the hot path of load balancers.
      if (!request.query.checks) {
        reply.send({ status: 'ok', ...base, timestamp: new Date().toISOString() });
        return;
      }
      return runChecks(deps.healthChecks, request.log).then(({ down, checks }) => {
        reply.status(down ? 503 : 200).send({ status: down ? 'degraded' : 'ok', ...base, timestamp: new Date().toISOString(), checks });
      });
    },
  );
};

/** Runs every check at once; `down` when a required one failed. */
async function runChecks(
  healthChecks: Deps['healthChecks'],
  log: FastifyBaseLogger,
): Promise<{ down: boolean; checks: Record<string, { status: string; message?: string; engine?: string }> }> {
  const entries = await Promise.all(
    Object.entries(healthChecks).map(async ([name, check]) => {
      try {
        await withTimeout(check.run());
        return [name, { status: 'ok', ...check.info }, check.required] as const;
      } catch (err) {
        log.warn({ err, check: name }, 'health check failed');
        return [name, { status: 'down', message: `${name} is not reachable`, ...check.info }, check.required] as const;
      }
    }),
  );
  return {
    down: entries.some(([, c, required]) => required && c.status !== 'ok'),
    checks: Object.fromEntries(entries.map(([name, c]) => [name, c])),
  };
}
