// Entry point. Only light modules are imported here: the embedded Postgres is launched as soon
// as DATA_DIR is held, and the rest of the server (serve.ts, ≈ 1 s of loading on a slow machine)
// loads while postgres starts in its own process (docs/benchmarks.md, branch start39).
import { ConfigError, loadConfig, readEnv, type Config } from './config/index.js';
import { diskTooFullToStart } from './lib/disk.js';
import { ensureWritable, lockDataDir, type DataDirLock } from './lib/data-dir.js';
import { launchConfigured } from './db/launch.js';

/** Entry point: config → DATA_DIR → postgres launched → serve.ts (deps → app → listen). */
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
  const taken = await takeDataDir(config);
  const launched = launchConfigured(config);
  const { serve } = await import('./serve.js');
  await serve(config, taken, launched);
}

/**
 * DATA_DIR at start: writable (one line when not), held by this process alone when the database
 * lives there (a second Plinth on it refuses to start), and not nearly full.
 */
async function takeDataDir(config: Config): Promise<{ usesDataDir: boolean; lock: DataDirLock | null }> {
  ensureWritable(config.dataDir);
  const dbInDataDir = config.databaseUrl === null || config.databaseUrl.startsWith('pglite:');
  const lock = dbInDataDir ? await lockDataDir(config.dataDir) : null;
  // A nearly full disk: one line that says so, rather than the database's own failure.
  const usesDataDir = dbInDataDir || config.storage.s3 === null;
  const tooFull = usesDataDir ? await diskTooFullToStart(config.dataDir) : null;
  if (tooFull) {
    await lock?.release();
    throw new Error(tooFull);
  }
  return { usesDataDir, lock };
}

main().catch((err) => {
  process.stderr.write(`Plinth failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
