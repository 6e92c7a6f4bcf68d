// Runs the postgres server process: start, wait until it accepts connections, restart it with
// back-off when it dies unexpectedly, and stop it with a fast shutdown.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { alive } from '../../lib/process.js';
import { EmbeddedPostgresError } from './binaries.js';
import { SUPERUSER, type RunAs } from './cluster.js';

export interface SupervisorOptions {
  postgres: string;
  dataDir: string;
  socketDir: string;
  user: RunAs | null;
  /** Server settings passed as `-c name=value` on every start. */
  settings: Record<string, string>;
  /** Receives lifecycle events (started, exited, restarting) for the log. */
  onEvent?: (event: string, detail: Record<string, unknown>) => void;
  /** Receives every line postgres writes to stdout/stderr (its own log: errors, slow statements); `logTo` replaces it. */
  onLog?: (line: string) => void;
}

const BACKOFF_MS = [100, 250, 500, 1000, 2000, 5000];
/** A run this long counts as healthy: the next crash starts the back-off again from the first step. */
const STABLE_MS = 30_000;
const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 15_000;
/**
 * The readiness poll asks again this often, or at once when postgres logs READY_LINE (the
 * poll's connection still decides: the line only ends the pause).
 */
const READY_POLL_MS = 50;
const READY_LINE = 'database system is ready to accept connections';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The command line of a live process, or '' when it cannot be read. */
export function commandOf(pid: number): string {
  try {
    if (existsSync(`/proc/${pid}/cmdline`)) return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    return execFileSync('ps', ['-o', 'command=', '-p', String(pid)], {
      stdio: ['ignore', 'pipe', 'ignore'],
    }).toString();
  } catch {
    return '';
  }
}

function parentOf(pid: number): number {
  try {
    if (existsSync(`/proc/${pid}/stat`))
      return Number(
        readFileSync(`/proc/${pid}/stat`, 'utf8')
          .replace(/^.*\) /, '')
          .split(' ')[1],
      );
    return Number(
      execFileSync('ps', ['-o', 'ppid=', '-p', String(pid)], { stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim(),
    );
  } catch {
    return 0;
  }
}

export class PostgresSupervisor {
  private child: ChildProcess | null = null;
  private stopping = false;
  private attempt = 0;
  private restartTimer: NodeJS.Timeout | null = null;
  private output: string[] = [];
  private exitWaiters: Array<() => void> = [];
  private readiness: Promise<void> | null = null;
  private onLog: ((line: string) => void) | undefined;
  /** Ends the readiness poll's pause early: postgres said it accepts connections. */
  private nudge: (() => void) | null = null;
  /** How many times postgres was restarted after an unexpected exit. */
  restarts = 0;

  constructor(private readonly options: SupervisorOptions) {
    this.onLog = options.onLog;
  }

  /** Where postgres's lines go from now on (the log store, once it exists). */
  logTo(onLog: (line: string) => void): void {
    this.onLog = onLog;
  }

  /** The connection URL of a database on this server (over the Unix socket). */
  url(database: string): string {
    return `postgres://${SUPERUSER}@localhost/${encodeURIComponent(database)}?host=${encodeURIComponent(this.options.socketDir)}`;
  }

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  /** Plinth exiting without stop() (a crash): postgres still gets its fast shutdown. */
  private readonly onProcessExit = () => {
    this.child?.kill('SIGINT');
  };

  /** Starts postgres and resolves once it accepts connections. */
  async start(): Promise<void> {
    await this.launch();
    await this.ready();
  }

  /**
   * Starts the postgres process and returns without waiting for it: `ready()` waits. A start
   * launches it before loading the rest of Plinth's code, which then loads while postgres
   * starts (main.ts).
   */
  async launch(): Promise<void> {
    this.stopping = false;
    this.readiness = null;
    await this.clearStalePid();
    process.on('exit', this.onProcessExit);
    this.spawnOnce();
  }

  /** Resolves once the launched postgres accepts connections (the same answer to every caller). */
  ready(): Promise<void> {
    this.readiness ??= this.waitReady();
    return this.readiness;
  }

  /**
   * A postmaster.pid left by a crash: a dead pid (or one reused by another program) is
   * removed; a postgres still running on this data dir (Plinth itself was killed) gets a
   * fast shutdown first.
   */
  private async clearStalePid(): Promise<void> {
    const file = path.join(this.options.dataDir, 'postmaster.pid');
    if (!existsSync(file)) return;
    const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
    if (Number.isInteger(pid) && pid > 0 && alive(pid) && /postgres/.test(commandOf(pid))) {
      const parent = parentOf(pid);
      if (parent > 1 && parent !== process.pid && /node|plinth/.test(commandOf(parent))) {
        throw new EmbeddedPostgresError(
          `Another Plinth process (pid ${parent}) runs the embedded Postgres of ${this.options.dataDir}. ` +
            'Stop it first (one server per DATA_DIR), or point this one at another DATA_DIR.',
        );
      }
      // Its Plinth died without stopping it: a fast shutdown, then start our own.
      this.options.onEvent?.('stopping an orphaned postgres', { pid });
      process.kill(pid, 'SIGINT');
      const deadline = Date.now() + STOP_TIMEOUT_MS;
      while (alive(pid) && Date.now() < deadline) await sleep(50);
      if (alive(pid)) process.kill(pid, 'SIGKILL');
      while (alive(pid)) await sleep(50);
    }
    // postgres removes its own pid file on a clean stop; whatever is left is stale.
    rmSync(file, { force: true });
  }

  private spawnOnce(): void {
    const { postgres, dataDir, socketDir, user, settings } = this.options;
    const args = ['-D', dataDir, '-k', socketDir, '-c', 'listen_addresses='];
    for (const [k, v] of Object.entries(settings)) args.push('-c', `${k}=${v}`);
    const child = spawn(postgres, args, {
      uid: user?.uid,
      gid: user?.gid,
      cwd: dataDir,
      env: { ...process.env, LC_ALL: 'C', TZ: 'UTC' },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: Ctrl-C in a terminal reaches Plinth only, which then stops
      // postgres in order (after draining requests) instead of both racing.
      detached: true,
    });
    const startedAt = Date.now();
    this.child = child;
    const keep = (d: Buffer) => {
      const lines = d.toString().split('\n').filter(Boolean);
      if (lines.some((l) => l.includes(READY_LINE))) this.nudge?.();
      if (this.onLog) for (const line of lines) this.onLog(line);
      this.output.push(...lines);
      if (this.output.length > 50) this.output.splice(0, this.output.length - 50);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    child.on('error', (err) => keep(Buffer.from(String(err))));
    child.on('exit', (code, signal) => {
      if (this.child === child) this.child = null;
      for (const w of this.exitWaiters.splice(0)) w();
      if (this.stopping) return;
      if (Date.now() - startedAt > STABLE_MS) this.attempt = 0;
      this.options.onEvent?.('postgres exited unexpectedly; restarting', {
        code,
        signal,
        output: this.output.slice(-5),
      });
      this.scheduleRestart();
    });
  }

  /** The next start after the back-off step; a failed attempt schedules the one after. */
  private scheduleRestart(): void {
    const delay = BACKOFF_MS[Math.min(this.attempt++, BACKOFF_MS.length - 1)]!;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (this.stopping) return;
      this.restarts++;
      this.clearStalePid().then(
        () => {
          if (!this.stopping) this.spawnOnce();
        },
        (err: unknown) => {
          this.options.onEvent?.('postgres could not be restarted; trying again', {
            error: String(err),
            delayMs: delay,
          });
          if (!this.stopping) this.scheduleRestart();
        },
      );
    }, delay);
  }

  /** Polls a connection until postgres answers, failing fast when the process exits. */
  private async waitReady(): Promise<void> {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    const child = this.child;
    // Imported here, not with this module: launch() runs before the pg client has loaded.
    const { default: pg } = await import('pg');
    while (Date.now() < deadline) {
      if (!child || child.exitCode !== null || child.signalCode !== null) break;
      const c = new pg.Client({ connectionString: this.url('postgres') });
      try {
        await c.connect();
        await c.query('select 1');
        await c.end();
        this.options.onEvent?.('postgres ready', { pid: child.pid });
        return;
      } catch {
        await c.end().catch(() => {});
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, READY_POLL_MS);
          this.nudge = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.nudge = null;
      }
    }
    const out = this.output.slice(-10).join('\n');
    await this.stop();
    throw new EmbeddedPostgresError(`The embedded Postgres did not start (data dir ${this.options.dataDir}).\n${out}`);
  }

  /** Fast shutdown (SIGINT: aborts open transactions, checkpoints), then waits for the exit. */
  async stop(): Promise<void> {
    this.stopping = true;
    process.off('exit', this.onProcessExit);
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.exitWaiters.push(resolve));
    child.kill('SIGINT');
    const timer = setTimeout(() => child.kill('SIGQUIT'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
    await drained(child.stderr);
    // Said on Plinth's own log too (the server's lines go to the log store, gone with it): an
    // operator stopping a container sees whether Postgres shut down cleanly.
    const clean = this.output.some((l) => l.includes('database system is shut down'));
    this.options.onEvent?.(clean ? 'postgres stopped: database system is shut down' : 'postgres stopped uncleanly', {
      pid: child.pid,
      code: child.exitCode,
      signal: child.signalCode,
    });
  }
}

/** Resolves when `stream` has given its last data ('exit' can come before it), or after 1 s. */
function drained(stream: NodeJS.ReadableStream | null): Promise<void> {
  if (!stream || (stream as { readableEnded?: boolean }).readableEnded) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(resolve, 1000);
    stream.once('end', () => {
      clearTimeout(t);
      resolve();
    });
  });
}
