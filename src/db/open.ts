// Chooses and opens the database from the configuration: the embedded Postgres server by
// default, a server at DATABASE_URL, or PGlite when asked for explicitly (DATABASE_URL=pglite://).
import path from 'node:path';
import type { Db } from './types.js';
import { openPostgres } from './postgres.js';
import { KEEP_IDLE } from './pool-idle.js';
import { openPglite } from './pglite.js';
import { EMBEDDED_DATABASE, openEmbedded } from './embedded/index.js';
import { carryOverPglite, removeNewCluster } from './embedded/carry-over.js';
import { type DbEventSink, embeddedDir, type LaunchedEmbedded, needsCarryOver } from './launch.js';

/** Which engine answers: Plinth's own Postgres server, a server at DATABASE_URL, or in-process PGlite. */
export type DbEngine = 'embedded' | 'postgres' | 'pglite';

/** `pglite://` → DATA_DIR/pglite; `pglite:///some/dir` → that dir. */
function pgliteDir(url: string, dataDir: string): string {
  const p = decodeURIComponent(new URL(url).pathname);
  return p && p !== '/' ? p : path.join(dataDir, 'pglite');
}

export async function openDatabase(opts: {
  dataDir: string;
  databaseUrl: string | null;
  onEvent?: DbEventSink;
  /**
   * The embedded server only: extra settings, where its own log lines go, and the cluster
   * main.ts launched already (db/launch.ts; its settings were given then).
   */
  embedded?: { settings?: Record<string, string>; onLog?: (line: string) => void; launched?: LaunchedEmbedded };
}): Promise<{ db: Db; engine: DbEngine }> {
  const { dataDir, databaseUrl, onEvent } = opts;
  if (databaseUrl?.startsWith('pglite:'))
    return { db: await openPglite(pgliteDir(databaseUrl, dataDir)), engine: 'pglite' };
  if (databaseUrl) return { db: await openPostgres(databaseUrl, { keepIdle: KEEP_IDLE }), engine: 'postgres' };
  const dir = embeddedDir(dataDir);
  const { launched, ...embedded } = opts.embedded ?? {};
  const carry = launched ? launched.carryOver : needsCarryOver(dataDir);
  const db = await openEmbedded({ dir, onEvent, ...embedded, launched: launched?.cluster });
  if (carry) {
    try {
      const movedTo = await carryOverPglite({ dataDir, url: db.cluster.url(EMBEDDED_DATABASE) });
      onEvent?.('carried the PGlite data over to the embedded Postgres', {
        from: path.join(dataDir, 'pglite'),
        keptAt: movedTo,
      });
    } catch (err) {
      await db.close();
      removeNewCluster(dir);
      throw err;
    }
  }
  return { db, engine: 'embedded' };
}
