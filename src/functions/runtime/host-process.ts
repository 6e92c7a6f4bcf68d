import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Pool } from 'undici';
import { hostArgs } from './deno.js';
import { hostPool } from './transport.js';
import type { LogSink } from './types.js';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Where calls go: connections to the Unix socket of the worker running the loaded version. */
export interface WorkerTarget {
  readonly socketPath: string;
  readonly dispatcher: Pool;
}

export interface HostProcessOptions {
  /** The deno binary (see denoBinary()). */
  binary: string;
  memoryMb: number;
  /** The process's temp dir and the dir of its sockets: made here, removed when it exits. */
  tmpDir: string;
  socketDir: string;
  /** Deno's cache, shared by the pool's processes. */
  denoDir: string;
  /** The socket of Plinth's bridge (bridge.ts), if any. */
  apiSocket?: string;
  /** Receives the hosted function's console output. */
  onLog: LogSink;
  /** The process failed to start: it could not be spawned, or it exited before it listened. */
  onStartFailed: (host: HostProcess, details: Record<string, unknown>) => void;
  /** The process exited after it listened; `wasAlive` when that was not kill()'s doing. */
  onExit: (host: HostProcess, exit: Exit, wasAlive: boolean) => void;
}

const SPAWN_TIMEOUT_MS = 15_000;

/**
 * One Deno process hosting (at most) one function, managed over its control socket (see
 * deno-host.js): started with a minimal environment, ready once it says it listens, its
 * stdout read as the function's log lines, its dirs and connections dropped when it exits.
 * The pool decides what it hosts (functionId, version, worker, lastUsed).
 */
export class HostProcess {
  readonly pid: number;
  /** The control socket (deploy, health), and connections to it. */
  readonly socketPath: string;
  readonly dispatcher: Pool;
  /** Resolves once the process listens; rejects when it fails to start. */
  readonly ready: Promise<void>;
  readonly exited: Promise<Exit>;
  /** The worker serving the loaded version; null until one is loaded. */
  worker: WorkerTarget | null = null;
  functionId: string | null = null;
  version: string | null = null;
  lastUsed = Date.now();
  /** Stopped by the memory watchdog. */
  overMemory = false;
  /** Where the host's standby worker (no module yet) listens, as the host said (takeStandby). */
  private standby: string | null = null;
  private readonly proc: ChildProcess;
  private readonly startTimer: NodeJS.Timeout;
  private running = true;
  private listening = false;
  /** The end of its stderr, told when it fails to start. */
  private stderr = '';
  private readiness!: { resolve: () => void; reject: (err: Error) => void };
  private resolveExit!: (exit: Exit) => void;

  constructor(private readonly opts: HostProcessOptions) {
    mkdirSync(opts.tmpDir);
    mkdirSync(opts.socketDir);
    this.socketPath = path.join(opts.socketDir, 'control.sock');
    this.proc = spawn(
      opts.binary,
      hostArgs({ socketDir: opts.socketDir, tmpDir: opts.tmpDir, memoryMb: opts.memoryMb, apiSocket: opts.apiSocket }),
      {
        // A minimal environment: none of Plinth's secrets reach the function processes.
        env: {
          HOME: opts.tmpDir,
          TMPDIR: opts.tmpDir,
          DENO_DIR: opts.denoDir,
          DENO_NO_UPDATE_CHECK: '1',
          NO_COLOR: '1',
        },
        // stdin stays open for the host's lifetime: it exits when Plinth does, however Plinth ends.
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    this.pid = this.proc.pid ?? -1;
    this.dispatcher = hostPool({ socketPath: this.socketPath }, 4);
    this.exited = new Promise<Exit>((resolve) => (this.resolveExit = resolve));
    this.ready = new Promise<void>((resolve, reject) => (this.readiness = { resolve, reject }));
    this.startTimer = setTimeout(() => {
      this.proc.kill('SIGKILL');
      this.readiness.reject(new Error('deno host did not start in time'));
    }, SPAWN_TIMEOUT_MS);
    this.proc.stderr!.setEncoding('utf8');
    this.proc.stderr!.on('data', (d: string) => {
      this.stderr = (this.stderr + d).slice(-4000);
    });
    createInterface({ input: this.proc.stdout! }).on('line', (line) => this.onLine(line));
    this.proc.on('error', (err) => this.onSpawnError(err));
    this.proc.on('exit', (code, signal) => this.onExit({ code, signal }));
  }

  /** False once stopped by kill(), or once it exited. */
  get alive(): boolean {
    return this.running;
  }

  /** Stops the process (SIGKILL: it may be stuck in a loop); its calls in flight fail. */
  kill(): void {
    if (this.running) this.proc.kill('SIGKILL');
    this.running = false;
  }

  /** Resident set size in KiB (0 when the process is gone or /proc is unavailable). */
  residentKiB(): number {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${this.pid}/status`, 'utf8'));
      return m ? Number(m[1]) : 0;
    } catch {
      return 0;
    }
  }

  /** One JSON line of stdout: the host saying it listens, or a line of the function's console. */
  private onLine(line: string): void {
    let m: { level?: unknown; message?: unknown };
    try {
      m = JSON.parse(line);
    } catch {
      return;
    }
    if (m.level === 'host') {
      if (typeof m.message === 'string' && m.message.startsWith('standby ')) {
        this.standbyAt(m.message.slice(8));
      } else if (!this.listening) {
        this.listening = true;
        clearTimeout(this.startTimer);
        this.readiness.resolve();
      }
      return;
    }
    if (this.functionId && typeof m.level === 'string' && typeof m.message === 'string') {
      this.opts.onLog(this.functionId, m.level, m.message);
    }
  }

  /**
   * A standby worker listens at `socket`: the next deploy may go there straight. Only a
   * worker's socket in this host's socket dir, which nothing the function runs can create.
   */
  private standbyAt(socket: string): void {
    if (path.dirname(socket) === this.opts.socketDir && /^w\d+\.sock$/.test(path.basename(socket))) {
      this.standby = socket;
    }
  }

  /** The socket of the standby worker, once (a deploy takes it); null when none is known. */
  takeStandby(): string | null {
    const s = this.standby;
    this.standby = null;
    return s;
  }

  private onSpawnError(err: Error): void {
    clearTimeout(this.startTimer);
    this.running = false;
    this.opts.onStartFailed(this, { err: err.message });
    this.resolveExit({ code: null, signal: null });
    this.readiness.reject(err);
  }

  private onExit(exit: Exit): void {
    clearTimeout(this.startTimer);
    void this.dispatcher.destroy().catch(() => {});
    void this.worker?.dispatcher.destroy().catch(() => {});
    const wasAlive = this.running;
    this.running = false;
    rmSync(this.opts.tmpDir, { recursive: true, force: true });
    rmSync(this.opts.socketDir, { recursive: true, force: true });
    if (!this.listening) {
      this.opts.onStartFailed(this, { ...exit, stderr: this.stderr.slice(-1000) });
      this.readiness.reject(new Error(`deno host exited before listening (${exit.signal ?? exit.code})`));
    } else {
      this.opts.onExit(this, exit, wasAlive);
    }
    this.resolveExit(exit);
  }
}

/** V8 aborts the process on heap exhaustion (Deno exits by SIGTRAP or SIGABRT). */
export function isOutOfMemory(e: Exit): boolean {
  return e.signal === 'SIGTRAP' || e.signal === 'SIGABRT' || e.code === 133 || e.code === 134;
}
