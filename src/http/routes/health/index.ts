import { type Static, Type } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger } from 'fastify';
import type { Deps } from '../../../deps.js';
import type { RoutePlugin } from '../../types.js';
import type { LaneRoute } from '../../front-lane.js';
import { unreachableReason } from '../../../lib/wait-for-services.js';

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
  checks: Type.Optional(
    Type.Record(
      Type.String(),
      Type.Object(
        {
          status: Type.String(),
          message: Type.Optional(Type.String()),
          engine: Type.Optional(Type.String()),
          freeBytes: Type.Optional(Type.Number()),
        },
        { additionalProperties: true },
      ),
    ),
  ),
});

// A 503 is also the error envelope: the answer while the server drains on SIGTERM.
const Envelope = Type.Object({
  statusCode: Type.Number(),
  error: Type.String(),
  message: Type.String(),
  nextActions: Type.String(),
});

const CHECK_TIMEOUT_MS = 3000;

function withTimeout<T>(p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timed out')), CHECK_TIMEOUT_MS);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** The fields of every health answer but status, time and checks. */
const baseOf = (plinthVersion: string) => ({ service: 'plinth', version: INSFORGE_API_LEVEL, plinthVersion });

/**
 * The body of plain liveness (`GET /api/health` without checks), made anew per answer: the
 * route's and the front lane's (http/front-lane.ts) answer, from one place.
 */
export function liveness(plinthVersion: string): () => Static<typeof Health> {
  const base = baseOf(plinthVersion);
  return () => ({ status: 'ok', ...base, timestamp: new Date().toISOString() });
}

/**
 * Plain liveness in the front lane: `GET /api/health` with no query string, as the route below
 * answers it (the same JSON text); its 200s are counted into one log line a minute
 * (docs/logs.md). The timestamp is the only part that changes, to the millisecond: the text is
 * the fixed part and the time, and answers within one millisecond share it (issue #38).
 */
export function healthLane(plinthVersion: string): LaneRoute {
  const fixed = JSON.stringify({ status: 'ok', ...baseOf(plinthVersion), timestamp: '' });
  const head = fixed.slice(0, -2);
  let ms = Number.NaN;
  let text = '';
  const body = () => {
    const now = Date.now();
    if (now !== ms) {
      ms = now;
      text = `${head}${new Date(now).toISOString()}"}`;
    }
    return text;
  };
  return { path: '/api/health', body, counted: true };
}

/** GET /api/health: never touches the database unless `?checks=true`; never rate limited. */
export const healthRoutes: RoutePlugin<'healthChecks' | 'version'> = async (app, { deps }) => {
  const base = baseOf(deps.version);
  const live = liveness(deps.version);
  app.get(
    '/api/health',
    {
      config: { access: 'open', rateLimit: false },
      schema: {
        tags: ['health'],
        summary: 'Liveness; with checks=true also readiness of database, storage and function runtime',
        querystring: Type.Object({ checks: Type.Optional(Type.Boolean()) }),
        response: { 200: Health, 503: Type.Union([Health, Envelope]) },
      },
    },
    (request, reply) => {
      // Plain liveness answers synchronously: no promise on the hot path of load balancers.
      if (!request.query.checks) {
        reply.send(live());
        return;
      }
      return runChecks(deps.healthChecks, request.log).then(({ down, degraded, checks }) => {
        reply
          .status(down ? 503 : 200)
          .send({ status: down || degraded ? 'degraded' : 'ok', ...base, timestamp: new Date().toISOString(), checks });
      });
    },
  );
};

type CheckAnswer = { status: string; message?: string; engine?: string; freeBytes?: number };

/** Runs every check at once; `down` when a required one failed, `degraded` when one says so (a 200). */
async function runChecks(
  healthChecks: Deps['healthChecks'],
  log: FastifyBaseLogger,
): Promise<{ down: boolean; degraded: boolean; checks: Record<string, CheckAnswer> }> {
  const entries = await Promise.all(
    Object.entries(healthChecks).map(async ([name, check]): Promise<readonly [string, CheckAnswer, boolean]> => {
      try {
        const report = (await withTimeout(check.run())) ?? {};
        const state = report.degraded ? { status: 'degraded', message: report.degraded } : { status: 'ok' };
        return [name, { ...state, ...check.info, ...report.info }, check.required] as const;
      } catch (err) {
        log.warn({ err, check: name }, 'health check failed');
        const message = `${name} is not reachable: ${reasonOf(err)}`;
        return [name, { status: 'down', message, ...check.info }, check.required] as const;
      }
    }),
  );
  return {
    down: entries.some(([, c, required]) => required && c.status === 'down'),
    degraded: entries.some(([, c]) => c.status === 'degraded'),
    checks: Object.fromEntries(entries.map(([name, c]) => [name, c])),
  };
}

/** Why a check failed, naming no credential: the socket's or server's code, from the error or what it wraps. */
function reasonOf(err: unknown): string {
  if ((err as Error)?.message === 'timed out') return `no answer within ${CHECK_TIMEOUT_MS / 1000} s`;
  const cause = (err as { cause?: unknown })?.cause;
  const reason = unreachableReason(cause ?? err);
  return reason === 'the connection failed' && cause ? unreachableReason(err) : reason;
}
