// The default database: a real Postgres server that Plinth runs itself from the npm binaries,
// reached over a Unix socket through the same pool as DATABASE_URL.
import pg from 'pg';
import type { Db } from '../types.js';
import { openPostgres } from '../postgres.js';
import { KEEP_IDLE } from '../pool-idle.js';
import { pgErrorInfo } from '../errors.js';
import { AppError } from '../../errors/index.js';
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
 * The pool on database `plinth`. On a cluster made before, the pool's first query is the check
 * that the database exists (one connection fewer at each start); it is made when missing.
 */
async function openPlinth(cluster: EmbeddedCluster, max: number): Promise<Db> {
  const open = () => openPostgres(cluster.url(EMBEDDED_DATABASE), { max, prepare: true, keepIdle: KEEP_IDLE });
  if (cluster.created) {
    await ensureDatabase(cluster, EMBEDDED_DATABASE);
    return open();
  }
  try {
    return await open();
  } catch (err) {
    if (pgErrorInfo(err instanceof AppError ? err.cause : err)?.code !== NO_SUCH_DATABASE) throw err;
    await ensureDatabase(cluster, EMBEDDED_DATABASE);
    return open();
  }
}

/** SQLSTATE invalid_catalog_name: the database named by the connection does not exist. */
const NO_SUCH_DATABASE = '3D000';

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
    db = await openPlinth(cluster, opts.max ?? 10);
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
