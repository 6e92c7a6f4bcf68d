// The embedded Postgres as the configuration asks for it, launched at the very start of
// main.ts: postgres starts (initdb first on a new data dir) while the rest of Plinth's code
// loads, then buildDeps waits for it (db/open.ts). Only light modules here: no pg client, no pool.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/index.js';
import { processLog } from '../lib/process-log.js';
import { type EmbeddedCluster, launchCluster } from './embedded/launch.js';

/** Where the embedded server's lifecycle events go (started, restarted, carried over). */
export type DbEventSink = (event: string, detail: Record<string, unknown>) => void;

/** The cluster main.ts launched, and whether DATA_DIR held PGlite data to carry over before it did. */
export interface LaunchedEmbedded {
  cluster: Promise<EmbeddedCluster>;
  carryOver: boolean;
}

/** Where the embedded cluster lives in DATA_DIR. */
export const embeddedDir = (dataDir: string): string => path.join(dataDir, 'postgres');

/** True when `dataDir` holds PGlite data and no embedded cluster yet. */
export function needsCarryOver(dataDir: string): boolean {
  return existsSync(path.join(dataDir, 'pglite', 'PG_VERSION')) && !existsSync(embeddedDir(dataDir));
}

/** Lifecycle lines of the embedded Postgres (started, restarted, carried over), as JSON log lines. */
export function dbEvents(config: Readonly<Config>): DbEventSink {
  const log = processLog(config.logLevel, process.stderr);
  // An unexpected exit of postgres is a warning; starts, stops and the carry-over are info.
  return (event, detail) =>
    log(/unexpectedly|uncleanly|orphaned|could not/.test(event) ? 'warn' : 'info', `database: ${event}`, detail);
}

/**
 * What the embedded server logs (its stderr, read into the log store): slow statements past
 * LOG_SLOW_STATEMENT_MS without their bind values, and errors without the failing statement's
 * text (admin SQL may carry secrets).
 */
export function embeddedLogSettings(config: Readonly<Config>): Record<string, string> {
  return {
    log_min_duration_statement: String(config.logs.slowStatementMs),
    log_parameter_max_length: '0',
    log_min_error_statement: 'panic',
    log_line_prefix: '%m [%p] ',
  };
}

/**
 * Launches the embedded cluster when the configuration uses it (no DATABASE_URL), else null.
 * Call it once DATA_DIR is locked (main.ts). A failure (initdb, a postgres already running on
 * the data dir) is reported where the cluster is awaited, by buildDeps.
 */
export function launchConfigured(config: Readonly<Config>): LaunchedEmbedded | null {
  if (config.databaseUrl !== null) return null;
  const carryOver = needsCarryOver(config.dataDir);
  const cluster = launchCluster({
    dir: embeddedDir(config.dataDir),
    settings: embeddedLogSettings(config),
    onEvent: dbEvents(config),
  });
  cluster.catch(() => {}); // handled where it is awaited; not an unhandled rejection meanwhile
  return { cluster, carryOver };
}
