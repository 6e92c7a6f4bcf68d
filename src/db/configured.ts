// The database as the configuration asks for it: opened with the embedded server's log
// settings, its lifecycle events written as JSON log lines.
import type { Config } from '../config/index.js';
import { type DbEngine, openDatabase } from './open.js';
import type { Db } from './types.js';
import { type DbEventSink, dbEvents, embeddedLogSettings, type LaunchedEmbedded } from './launch.js';

/**
 * The database handed in (tests), or the configured one (with the embedded cluster main.ts
 * launched, when it did); `onLog` hears the embedded server's log.
 */
export async function givenOrOpened(
  config: Readonly<Config>,
  opts: { db?: Db; engine?: DbEngine; launched?: LaunchedEmbedded | null },
  onLog: (line: string) => void,
): Promise<{ db: Db; engine: DbEngine }> {
  if (opts.db) return { db: opts.db, engine: opts.engine ?? (opts.db.kind === 'pglite' ? 'pglite' : 'postgres') };
  return openDatabase({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    onEvent: dbEvents(config),
    embedded: { settings: embeddedLogSettings(config), onLog, launched: opts.launched ?? undefined },
  });
}

/** The configured database: the embedded Postgres by default, DATABASE_URL, or pglite://. */
export async function openDb(config: Readonly<Config>, onEvent: DbEventSink = dbEvents(config)): Promise<Db> {
  return (await openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, onEvent })).db;
}
