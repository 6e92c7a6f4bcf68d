// The embedded cluster launched: initdb once, then the postgres process started, with no wait
// for it to accept connections (`ready()` waits). Kept apart from the pool and the pg client so
// that a start can launch postgres before the rest of Plinth's code has loaded (main.ts).
import path from 'node:path';
import { locateBinaries } from './binaries.js';
import { ensureCluster, resolveRunAs, socketDir } from './cluster.js';
import { PostgresSupervisor } from './supervisor.js';

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
  /** Resolves once postgres accepts connections; rejects (postgres stopped) when it cannot start. */
  ready(): Promise<void>;
  stop(): Promise<void>;
}

export interface LaunchOptions {
  dir: string;
  settings?: Record<string, string>;
  onEvent?: (event: string, detail: Record<string, unknown>) => void;
  onLog?: (line: string) => void;
}

/** Initialises (once) the cluster in `dir` and starts postgres on it, without waiting for it. */
export async function launchCluster(opts: LaunchOptions): Promise<EmbeddedCluster> {
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
    await supervisor.launch();
  } catch (err) {
    socket.cleanup();
    throw err;
  }
  return {
    supervisor,
    created,
    url: (database) => supervisor.url(database),
    ready: () =>
      supervisor.ready().catch((err: unknown) => {
        socket.cleanup();
        throw err;
      }),
    stop: async () => {
      await supervisor.stop();
      socket.cleanup();
    },
  };
}
