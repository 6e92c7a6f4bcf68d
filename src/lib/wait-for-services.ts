// A server Postgres (DATABASE_URL) or Redis (REDIS_URL) that is not there yet when Plinth
// starts, as in a compose stack or a Kubernetes rollout where they come up later or move:
// Plinth waits for them instead of exiting, says why in one log line (again when the reason
// changes), and meanwhile answers GET /api/health with 503 and that reason, so an orchestrator
// sees the instance as not ready and why. Once every one answers, the normal start goes on.
import http from 'node:http';
import pg from 'pg';
import { connectRedis } from './redis.js';

/** Why a connection failed, in words that name no credential and no statement. */
export function unreachableReason(err: unknown): string {
  const e = err as { code?: string; message?: string; hostname?: string };
  switch (e?.code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `its host${e.hostname ? ` ${e.hostname}` : ''} cannot be resolved (${e.code})`;
    case 'ECONNREFUSED':
      return 'the connection was refused (ECONNREFUSED): nothing listens at that address';
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `its host cannot be reached (${e.code})`;
    case '28P01':
    case '28000':
      return `authentication failed (${e.code}): check the user and password in the URL`;
    case '3D000':
      return `the database does not exist (${e.code})`;
    case '57P03':
      return `the server is starting up or shutting down (${e.code})`;
  }
  if (/timeout|timed out/i.test(e?.message ?? '')) return 'the connection timed out';
  if (/terminated/i.test(e?.message ?? '')) return 'the connection was closed by the server';
  if (/WRONGPASS|NOAUTH/.test(e?.message ?? '')) return 'authentication failed: check the password in the URL';
  return e?.code ? `error ${e.code}` : 'the connection failed';
}

/** A service to wait for: its name in health, the URL, and one attempt that throws what failed. */
export interface Dependency {
  name: string;
  url: string;
  probe: () => Promise<void>;
}

/** Postgres at `url`: connect, `select 1`, disconnect. */
export function postgresService(url: string, timeoutMs = 3000): Dependency {
  return { name: 'database', url, probe: () => probePostgres(url, timeoutMs) };
}

/** Redis at `url`: connect and quit. */
export function redisService(url: string): Dependency {
  return { name: 'redis', url, probe: async () => void (await (await connectRedis(url)).quit()) };
}

async function probePostgres(url: string, timeoutMs: number): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
  } finally {
    await client.end().catch(() => {});
  }
}

/** The answer while waiting: health with the reasons, everything else the 503 envelope. */
function waitingServer(reasons: Map<string, string>): http.Server {
  const reason = () => [...reasons].map(([name, why]) => `${name}: ${why}`).join('; ');
  return http.createServer((req, res) => {
    const health = (req.url ?? '').split('?')[0] === '/api/health';
    const body = health
      ? {
          status: 'starting',
          service: 'plinth',
          timestamp: new Date().toISOString(),
          checks: Object.fromEntries(
            [...reasons].map(([name, why]) => [name, { status: 'down', message: `${name} is not reachable: ${why}` }]),
          ),
        }
      : {
          statusCode: 503,
          error: 'SERVICE_UNAVAILABLE',
          message: `Plinth is waiting for ${reason()}`,
          nextActions: 'Retry in a few seconds; GET /api/health says when everything answers.',
        };
    res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'retry-after': '5', connection: 'close' });
    res.end(JSON.stringify(body));
  });
}

/**
 * Resolves once every service answers. Until then retries (every 1 s, backing off to 5 s),
 * logs each new reason through `log`, and serves the waiting answer on host:port.
 */
export async function waitForServices(opts: {
  services: Dependency[];
  host: string;
  port: number;
  log: (line: string) => void;
}): Promise<void> {
  const reasons = new Map<string, string>();
  let server: http.Server | null = null;
  let delay = 1000;
  for (;;) {
    await Promise.all(opts.services.map((s) => attempt(s, reasons, opts.log)));
    if (reasons.size === 0) break;
    if (!server) server = await listen(waitingServer(reasons), opts.host, opts.port);
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 1.5, 5000);
  }
  if (server) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server!.close(() => resolve()));
  }
}

/** One try of `s`: its reason recorded while it fails, logged when new, removed once it answers. */
async function attempt(s: Dependency, reasons: Map<string, string>, log: (line: string) => void): Promise<void> {
  const before = reasons.get(s.name);
  try {
    await s.probe();
    reasons.delete(s.name);
    if (before) log(`${s.name} ${where(s.url)} answers`);
  } catch (err) {
    const now = unreachableReason(err);
    if (now !== before)
      log(`${s.name} ${where(s.url)} is not reachable: ${now}; waiting for it (GET /api/health says why)`);
    reasons.set(s.name, now);
  }
}

function listen(server: http.Server, host: string, port: number): Promise<http.Server> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

/** host:port/path of a URL, without its user or password. */
function where(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}${u.port ? `:${u.port}` : ''}${u.pathname.length > 1 ? u.pathname : ''}`;
  } catch {
    return '(the URL does not parse)';
  }
}
