import { ConfigError, loadConfig, readEnv } from './config/index.js';
import { buildDeps } from './deps.js';
import { buildApp } from './app.js';
import { BYTE_ORDER_ADVICE, sortsTextByBytes } from './db/collation.js';
import { LogDestination } from './lib/log-destination.js';
import { diskTooFullToStart } from './lib/disk.js';

/** Entry point: config → deps → app → listen; drains and closes on SIGTERM/SIGINT. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(readEnv());
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\nFix these and start again. The README lists every variable.\n`);
      process.exit(1);
    }
    throw err;
  }
  // A log reader that has gone (EPIPE) must not crash, hold or block the server.
  process.stdout.on('error', () => {});
  process.stderr.on('error', () => {});
  const logs = new LogDestination(1);
  // A nearly full disk: one line that says so, rather than the database's own failure.
  const usesDataDir = config.databaseUrl === null || config.databaseUrl.startsWith('pglite:') || config.storage.s3 === null;
  const tooFull = usesDataDir ? await diskTooFullToStart(config.dataDir) : null;
  if (tooFull) throw new Error(tooFull);
  const deps = await buildDeps(config).catch(async (err) => {
    // Out of space while starting (creating the cluster, migrating): say that, in one line.
    const full = usesDataDir && ((err as NodeJS.ErrnoException).code === 'ENOSPC' || (err as { code?: string }).code === '53100');
    throw full ? new Error(`No space left on the disk of DATA_DIR (${config.dataDir}) while starting. Free disk space there, or set DATA_DIR to a folder on a bigger disk.`) : err;
  });
  const app = await buildApp(deps, { logStream: logs });
  if (deps.generatedAdminKey) {
    // Printed once, outside the log: only its hash is stored.
    process.stdout.write(
      `\n  Plinth generated an admin API key. It is shown only now; store it safely:\n\n    ${deps.generatedAdminKey}\n\n` +
        `  Sign in with it at http://${LOOPBACK.has(config.host) || config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host}:${config.port}/dashboard\n` +
        `  Rotate it with "npm run plinth -- keys rotate-admin". Anon key: ${deps.credentials.anonKey}\n\n`,
    );
  }
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
    // Node closes the keep-alive connections that are idle when closing starts; one whose
    // request finishes later would stay open until the client drops it (up to the keep-alive
    // timeout) and hold the exit back: close each as soon as it falls idle.
    const sweep = setInterval(() => app.server.closeIdleConnections(), 50);
    sweep.unref();
    try {
      await app.close(); // stops accepting, waits for in-flight requests
      await deps.close(); // function runtime, redis, database pool
      exit(0);
    } catch (err) {
      app.log.error({ err }, 'error while shutting down');
      exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  await app.listen({ port: config.port, host: config.host });
  if (await sortsTextByBytes(deps.db).catch(() => false)) app.log.warn(BYTE_ORDER_ADVICE);
  if (config.publicUrl === null && !LOOPBACK.has(config.host)) {
    app.log.warn(
      'PUBLIC_URL is not set: absolute links (upload and download URLs, a function\'s request URL) follow each request\'s Host header. ' +
        'Set PUBLIC_URL to the public address (e.g. https://api.example.com) so that a forged Host cannot make links point elsewhere.',
    );
  }
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

main().catch((err) => {
  process.stderr.write(`Plinth failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
