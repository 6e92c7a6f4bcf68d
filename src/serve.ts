// The server once its configuration is read and DATA_DIR is held (main.ts): services built,
// the app listening, drained and closed on SIGTERM/SIGINT.
import type { Config } from './config/index.js';
import { buildDeps } from './deps.js';
import { buildApp } from './app.js';
import { BYTE_ORDER_ADVICE, sortsTextByBytes } from './db/collation.js';
import type { LaunchedEmbedded } from './db/launch.js';
import { LogDestination } from './lib/log-destination.js';
import { postgresService, redisService, waitForServices } from './lib/wait-for-services.js';
import type { DataDirLock } from './lib/data-dir.js';

/** deps → app → listen; `launched` is the embedded cluster main.ts started, when it did. */
export async function serve(
  config: Config,
  { usesDataDir, lock }: { usesDataDir: boolean; lock: DataDirLock | null },
  launched: LaunchedEmbedded | null,
): Promise<void> {
  const logs = new LogDestination(1);
  await waitForServers(config);
  const deps = await buildDeps(config, { stdout: logs, launched }).catch(async (err) => {
    // Out of space while starting (creating the cluster, migrating): say that, in one line.
    const full =
      usesDataDir && ((err as NodeJS.ErrnoException).code === 'ENOSPC' || (err as { code?: string }).code === '53100');
    throw full
      ? new Error(
          `No space left on the disk of DATA_DIR (${config.dataDir}) while starting. Free disk space there, or set DATA_DIR to a folder on a bigger disk.`,
        )
      : err;
  });
  const app = await buildApp(deps, { logStream: logs, drainGraceMs: DRAIN_IDLE_GRACE_MS });
  if (deps.generatedAdminKey) printAdminKey(config, deps.generatedAdminKey, deps.credentials.anonKey);
  let stopping = false;
  // Exits once the pending log lines are written, or after a bound (a stalled log reader).
  const exit = (code: number) => void logs.drain(1000).then(() => process.exit(code));
  const stop = async (signal: string) => {
    if (stopping) {
      // A second signal: no more waiting for requests, nor for the log.
      process.stderr.write(`${signal} again: exiting now\n`);
      process.exit(1);
    }
    stopping = true;
    app.log.info({ signal }, 'shutting down: draining requests');
    const force = setTimeout(() => {
      app.log.error('shutdown took too long; exiting');
      exit(1);
    }, 20_000);
    force.unref();
    try {
      // Stops accepting; answers what arrives on open connections (503, Connection: close), closes
      // each once it is idle (after DRAIN_IDLE_GRACE_MS), waits for requests in flight.
      await app.close();
      await deps.close(); // function runtime, redis, database pool
      await lock?.release();
      exit(0);
    } catch (err) {
      app.log.error({ err }, 'error while shutting down');
      exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  await app.listen({ port: config.port, host: config.host }).catch((err) => {
    throw listenFailure(config, err);
  });
  if (await sortsTextByBytes(deps.db).catch(() => false)) app.log.warn(BYTE_ORDER_ADVICE);
  if (config.publicUrl === null && !LOOPBACK.has(config.host)) {
    app.log.warn(
      "PUBLIC_URL is not set: absolute links (upload and download URLs, a function's request URL) follow each request's Host header. " +
        'Set PUBLIC_URL to the public address (e.g. https://api.example.com) so that a forged Host cannot make links point elsewhere.',
    );
  }
}

/** A server Postgres and Redis that do not answer yet: waited for, health saying why (lib/wait-for-services.ts). */
async function waitForServers(config: Config): Promise<void> {
  const services = [];
  if (config.databaseUrl && !config.databaseUrl.startsWith('pglite:'))
    services.push(postgresService(config.databaseUrl));
  if (config.rateLimit.redisUrl) services.push(redisService(config.rateLimit.redisUrl));
  if (!services.length) return;
  const log = (msg: string) => process.stderr.write(`${JSON.stringify({ level: 40, time: Date.now(), msg })}\n`);
  await waitForServices({ services, host: config.host, port: config.port, log });
}

/** The generated admin key, printed once, outside the log: only its hash is stored. */
function printAdminKey(config: Config, key: string, anonKey: string): void {
  const host =
    LOOPBACK.has(config.host) || config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  process.stdout.write(
    `\n  Plinth generated an admin API key. It is shown only now; store it safely:\n\n    ${key}\n\n` +
      `  Sign in with it at http://${host}:${config.port}/dashboard\n` +
      `  Rotate it with "npm run plinth -- keys rotate-admin". Anon key: ${anonKey}\n\n`,
  );
}

/** A port that cannot be listened on, as the start's one line: what is wrong and what to do. */
function listenFailure(config: Config, err: NodeJS.ErrnoException): Error {
  const where = `port ${config.port} on ${config.host}`;
  if (err.code === 'EADDRINUSE')
    return new Error(
      `${where} is already in use (another Plinth, or another program). Stop it, or set PORT to a free port.`,
    );
  if (err.code === 'EACCES')
    return new Error(
      `this user may not listen on ${where} (ports below 1024 need privileges). Set PORT to 1024 or above.`,
    );
  if (err.code === 'EADDRNOTAVAIL')
    return new Error(
      `HOST ${config.host} is not an address of this machine. Set HOST to one of its addresses, or to 0.0.0.0 for all.`,
    );
  return err;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);
/**
 * While draining, a keep-alive connection is closed once idle this long: a client that sends its
 * next request sooner gets the 503 envelope instead of a reset.
 */
const DRAIN_IDLE_GRACE_MS = 1000;
