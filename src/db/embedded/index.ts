// The default database: a real Postgres server that Plinth runs itself from the npm binaries,
// reached over a Unix socket through the same pool as DATABASE_URL.
import path from 'node:path';
import pg from 'pg';
import type { Db } from '../types.js';
import { openPostgres } from '../postgres.js';
import { locateBinaries } from './binaries.js';
import { ensureCluster, resolveRunAs, socketDir } from './cluster.js';
import { PostgresSupervisor } from './supervisor.js';

export { EmbeddedPostgresError, unsupportedMessage } from './binaries.js';
export { PostgresSupervisor } from './supervisor.js';

/**
 * Tuned for a laptop: small shared memory, few connections (the pool uses 10), and no idle
 * background process that the embedded server does not use: synchronous I/O instead of
 * Postgres 18's three I/O worker processes, and no logical replication launcher (nothing
 * subscribes; backups use a physical slot). docs/benchmarks.md has the measured effect.
 */
export const LAPTOP_SETTINGS: Record<string, string> = {
  shared_buffers: '32MB',
  max_connections: '30',
  huge_pages: 'off',
  dynamic_shared_memory_type: 'mmap',
  unix_socket_permissions: '0700',
  max_worker_processes: '4',
  max_parallel_workers: '2',
  autovacuum_max_workers: '2',
  io_method: 'sync',
  max_logical_replication_workers: '0',
  wal_buffers: '1MB',
  timezone: 'UTC',
  log_timezone: 'UTC',
};

export interface EmbeddedCluster {
  supervisor: PostgresSupervisor;
  /** True when this start ran initdb (a new cluster). */
  created: boolean;
  url(database: string): string;
  stop(): Promise<void>;
}

/** Initialises (once) and starts the cluster in `dir`; resolves when it accepts connections. */
export async function startCluster(opts: {
  dir: string;
  settings?: Record<string, string>;
  onEvent?: (event: string, detail: Record<string, unknown>) => void;
  onLog?: (line: string) => void;
}): Promise<EmbeddedCluster> {
  const dir = path.resolve(opts.dir);
  const bins = await locateBinaries();
  const user = resolveRunAs();
  const created = await ensureCluster({ bins, dir, user });
  const socket = socketDir(dir, user);
  const supervisor = new PostgresSupervisor({
    postgres: bins.postgres,
    dataDir: dir,
    socketDir: socket.dir,
    user,
    settings: { ...LAPTOP_SETTINGS, ...opts.settings },
    onEvent: opts.onEvent,
    onLog: opts.onLog,
  });
  try {
    await supervisor.start();
  } catch (err) {
    socket.cleanup();
    throw err;
  }
  return {
    supervisor,
    created,
    url: (database) => supervisor.url(database),
    stop: async () => {
      await supervisor.stop();
      socket.cleanup();
    },
  };
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
export async function openEmbedded(opts: {
  dir: string;
  max?: number;
  onEvent?: (event: string, detail: Record<string, unknown>) => void;
  /** Extra server settings (e.g. log_min_duration_statement) and the sink of the server's log lines. */
  settings?: Record<string, string>;
  onLog?: (line: string) => void;
}): Promise<Db & { cluster: EmbeddedCluster }> {
  const cluster = await startCluster({
    dir: opts.dir,
    onEvent: opts.onEvent,
    settings: opts.settings,
    onLog: opts.onLog,
  });
  let db: Db;
  try {
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
