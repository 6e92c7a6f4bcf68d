// The database as the configuration asks for it: opened with the embedded server's log
// settings, its lifecycle events written as JSON log lines.
import type { Config } from '../config/index.js';
import { type DbEngine, type DbEventSink, openDatabase } from './open.js';
import type { Db } from './types.js';

/** Lifecycle lines of the embedded Postgres (started, restarted, carried over), as JSON log lines. */
export function dbEvents(config: Readonly<Config>): DbEventSink {
  const LEVELS: Record<string, number> = {
    trace: 10,
    debug: 20,
    info: 30,
    warn: 40,
    error: 50,
    fatal: 60,
    silent: Infinity,
  };
  const min = LEVELS[config.logLevel] ?? 30;
  return (event: string, detail: Record<string, unknown>) => {
    // An unexpected exit of postgres is a warning; starts, stops and the carry-over are info.
    const level = /unexpectedly|uncleanly|orphaned|could not/.test(event) ? 40 : 30;
    if (level < min) return;
    process.stderr.write(`${JSON.stringify({ level, time: Date.now(), msg: `database: ${event}`, ...detail })}\n`);
  };
}

/**
 * What the embedded server logs (its stderr, read into the log store): slow statements past
 * LOG_SLOW_STATEMENT_MS without their bind values, and errors without the failing statement's
 * text (admin SQL may carry secrets).
 */
function embeddedLogSettings(config: Readonly<Config>): Record<string, string> {
  return {
    log_min_duration_statement: String(config.logs.slowStatementMs),
    log_parameter_max_length: '0',
    log_min_error_statement: 'panic',
    log_line_prefix: '%m [%p] ',
  };
}

/** The database handed in (tests), or the configured one; `onLog` hears the embedded server's log. */
export async function givenOrOpened(
  config: Readonly<Config>,
  opts: { db?: Db; engine?: DbEngine },
  onLog: (line: string) => void,
): Promise<{ db: Db; engine: DbEngine }> {
  if (opts.db) return { db: opts.db, engine: opts.engine ?? (opts.db.kind === 'pglite' ? 'pglite' : 'postgres') };
  return openDatabase({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    onEvent: dbEvents(config),
    embedded: { settings: embeddedLogSettings(config), onLog },
  });
}

/** The configured database: the embedded Postgres by default, DATABASE_URL, or pglite://. */
export async function openDb(config: Readonly<Config>, onEvent: DbEventSink = dbEvents(config)): Promise<Db> {
  return (await openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, onEvent })).db;
}
