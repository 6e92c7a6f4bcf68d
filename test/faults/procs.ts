// Real processes the fault tests start, stop and restart themselves: a server Postgres from
// Debian's binaries, a redis-server, and the load that runs against Plinth meanwhile.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { until } from '../helpers/until.js';
import { freePort } from '../helpers/port.js';

function exited(p: ChildProcess): Promise<void> {
  return p.exitCode !== null || p.signalCode !== null
    ? Promise.resolve()
    : new Promise((r) => p.once('exit', () => r()));
}

/** The bin folder of the newest Debian Postgres, or null. */
export function postgresBin(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(path.join(root, v, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(root, versions[0], 'bin') : null;
}

/** Postgres refuses to run as root: as root, run it as the `postgres` user. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (id.status !== 0) return undefined;
  return { uid: Number(id.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

export interface TestPostgres {
  url: string;
  start(): Promise<void>;
  /** SIGINT: Postgres' fast shutdown (aborts transactions, closes every connection). */
  stop(): Promise<void>;
  destroy(): Promise<void>;
}

/** Why this machine cannot run its own Postgres, or null when it can. */
export function postgresUnavailable(): string | null {
  if (!postgresBin()) return 'no Postgres binaries under /usr/lib/postgresql/*/bin (apt-get install postgresql)';
  if (process.getuid?.() === 0 && !runAs()) return 'running as root without a "postgres" user to run Postgres as';
  return null;
}

/** initdb in a temp dir and a postgres on a free port (trust auth, socket in the data dir). */
export async function startPostgres(): Promise<TestPostgres> {
  const bin = postgresBin()!;
  const user = runAs();
  const dir = mkdtempSync(path.join(tmpdir(), 'plinth-fault-pg-'));
  if (user) chownSync(dir, user.uid, user.gid);
  const init = spawnSync(
    path.join(bin, 'initdb'),
    ['-D', dir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C'],
    {
      ...user,
      encoding: 'utf8',
    },
  );
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
  const port = await freePort();
  let proc: ChildProcess | null = null;
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const pg: TestPostgres = {
    url,
    async start() {
      const args = [
        '-D',
        dir,
        '-p',
        String(port),
        '-k',
        dir,
        '-h',
        '127.0.0.1',
        '-c',
        'fsync=off',
        '-c',
        'max_connections=50',
      ];
      proc = spawn(path.join(bin, 'postgres'), args, { ...user, stdio: 'ignore' });
      await until(
        () =>
          new Promise<boolean>((resolve) => {
            const s = net.connect(port, '127.0.0.1', () => (s.destroy(), resolve(true)));
            s.on('error', () => resolve(false));
          }),
        30_000,
        'postgres to listen',
      );
      // Listening comes before accepting: wait until a query works.
      const { default: pgLib } = await import('pg');
      await until(
        async () => {
          const c = new pgLib.Client({ connectionString: url });
          await c.connect();
          await c.end();
          return true;
        },
        30_000,
        'postgres to accept connections',
      );
    },
    async stop() {
      if (!proc) return;
      const p = proc;
      proc = null;
      p.kill('SIGINT');
      await exited(p);
    },
    async destroy() {
      if (proc) {
        proc.kill('SIGKILL');
        await exited(proc);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await pg.start();
  return pg;
}

export interface TestRedis {
  url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** A redis-server on a free port, nothing persisted. */
export async function startRedis(): Promise<TestRedis> {
  const port = await freePort();
  let proc: ChildProcess | null = null;
  const r: TestRedis = {
    url: `redis://127.0.0.1:${port}`,
    async start() {
      proc = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        { stdio: 'ignore' },
      );
      await until(
        () =>
          new Promise<boolean>((resolve) => {
            const s = net.connect(port, '127.0.0.1', () => (s.destroy(), resolve(true)));
            s.on('error', () => resolve(false));
          }),
        10_000,
        'redis to listen',
      );
    },
    async stop() {
      if (!proc) return;
      const p = proc;
      proc = null;
      p.kill('SIGKILL');
      await exited(p);
    },
  };
  await r.start();
  return r;
}

export function hasCommand(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
}
