// The default database: a real Postgres server that Plinth runs itself from the npm binaries,
// reached over a Unix socket through the same pool as DATABASE_URL.
import pg from 'pg';
import type { Db } from '../types.js';
import { openPostgres } from '../postgres.js';
import { type EmbeddedCluster, type LaunchOptions, launchCluster } from './launch.js';

export { EmbeddedPostgresError, unsupportedMessage } from './binaries.js';
export { PostgresSupervisor } from './supervisor.js';
export { type EmbeddedCluster, LAPTOP_SETTINGS, launchCluster } from './launch.js';

/** Initialises (once) and starts the cluster in `dir`; resolves when it accepts connections. */
export async function startCluster(opts: LaunchOptions): Promise<EmbeddedCluster> {
  const cluster = await launchCluster(opts);
  await cluster.ready();
  return cluster;
}

/** The database Plinth keeps its data in, inside the embedded cluster. */
export const EMBEDDED_DATABASE = 'plinth';

/** Creates `name` on the cluster when it is missing (the name is a fixed identifier, not input). */
export async function ensureDatabase(cluster: EmbeddedCluster, name: string): Promise<void> {
  const c = new pg.Client({ connectionString: cluster.url('postgres') });
  await c.connect();
  try {
    const { rowCount } = await c.query('select 1 from pg_database where datname = $1', [name]);
    if (!rowCount) await c.query(`create database "${name.replace(/"/g, '""')}"`);
  } finally {
    await c.end();
  }
}

/**
 * Opens the embedded default: cluster in `dir`, database `plinth`, the `pg` pool over the
 * socket. `close()` ends the pool, then stops postgres (fast shutdown) and waits for it.
 */
export async function openEmbedded(
  opts: LaunchOptions & {
    max?: number;
    /** The cluster of `dir` launched already (main.ts launches it first): waited for, not started again. */
    launched?: Promise<EmbeddedCluster>;
  },
): Promise<Db & { cluster: EmbeddedCluster }> {
  const cluster = await (opts.launched ?? launchCluster(opts));
  if (opts.launched && opts.onLog) cluster.supervisor.logTo(opts.onLog);
  let db: Db;
  try {
    await cluster.ready();
    await ensureDatabase(cluster, EMBEDDED_DATABASE);
    db = await openPostgres(cluster.url(EMBEDDED_DATABASE), { max: opts.max ?? 10, prepare: true });
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return {
    ...db,
    kind: db.kind,
    cluster,
    close: async () => {
      await db.close().catch(() => {});
      await cluster.stop();
    },
  };
}
