import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Pool } from 'undici';
import { AppError } from '../../errors/index.js';
import { hostArgs } from './deno.js';
import type { FunctionRuntime, InvokeRequest, InvokeResponse, RuntimeFunction, LogSink } from './types.js';
import { checkHost, deployTo } from './control.js';
import { HostUnreachable, loadRefused } from './faults.js';
import { sendToHost } from './send.js';
import { hostPool } from './transport.js';

export interface PoolOptions {
  /** The deno binary (see denoBinary()). */
  binary: string;
  memoryMb: number;
  timeoutMs: number;
  onLog: LogSink;
  /** Most warm function processes kept; the least recently used one is stopped past it. */
  maxHosts?: number;
  /** A warm process unused this long is stopped. */
  idleMs?: number;
  /** Where the pool's temp dir is made (default: the OS temp dir). */
  tmpRoot?: string;
  /** Told about process exits and spawn failures (the app log). */
  warn?: (msg: string, extra?: Record<string, unknown>) => void;
}

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Where calls go: connections to the Unix socket of the worker running the loaded version. */
interface WorkerTarget {
  readonly socketPath: string;
  readonly dispatcher: Pool;
}

/** One Deno process hosting (at most) one function, managed over its control socket. */
export interface Host {
  readonly pid: number;
  /** The control socket (deploy, health), and connections to it. */
  readonly socketPath: string;
  readonly dispatcher: Pool;
  /** The worker serving the loaded version; null until one is loaded. */
  worker: WorkerTarget | null;
  functionId: string | null;
  version: string | null;
  lastUsed: number;
  alive: boolean;
  /** Stopped by the memory watchdog. */
  overMemory: boolean;
  readonly exited: Promise<Exit>;
  readonly proc: ChildProcess;
}

const SPAWN_TIMEOUT_MS = 15_000;
const DIR_PREFIX = 'plinth-fn-';
// What the Deno runtime itself takes besides the function's heap: the process with its
// main isolate, the function's worker and a standby worker measure about 60 MiB.
const PROCESS_BASE_MIB = 96;
const MEMORY_CHECK_MS = 100;
const MAX_BACKOFF_MS = 5_000;

/**
 * The local function runtime: one Deno process per warm function (so a function that
 * exhausts its memory limit or loops takes down only itself), one spare process kept
 * started so a cold start only loads the code, processes restarted on demand with backoff
 * when they fail to start.
 */
export class HostPool implements FunctionRuntime {
  private readonly baseDir: string;
  private readonly byFunction = new Map<string, Host>();
  /** The deploy under way per function (one at a time: the last one asked for serves). */
  private readonly deploying = new Map<string, { version: string; host: Promise<Host> }>();
  private readonly all = new Set<Host>();
  private spare: Promise<Host> | null = null;
  private failures = 0;
  private retryAt = 0;
  private closed = false;
  private seq = 0;
  private readonly sweeper: NodeJS.Timeout;
  /** Runs only while some function is warm: an idle server stays asleep. */
  private memoryWatch: NodeJS.Timeout | null = null;

  constructor(private readonly o: PoolOptions) {
    const root = o.tmpRoot ?? tmpdir();
    removeStaleDirs(root);
    this.baseDir = mkdtempSync(path.join(root, DIR_PREFIX));
    mkdirSync(path.join(this.baseDir, 'deno'));
    writeFileSync(path.join(this.baseDir, 'owner.pid'), String(process.pid));
    const idleMs = o.idleMs ?? 10 * 60_000;
    this.sweeper = setInterval(() => {
      const now = Date.now();
      for (const h of this.byFunction.values()) if (now - h.lastUsed > idleMs) this.kill(h);
    }, Math.min(idleMs, 60_000));
    this.sweeper.unref();
  }

  // V8's heap limit (--max-old-space-size) does not count ArrayBuffers and other memory
  // outside the JS heap, so the resident size of each warm process is watched as well.
  private watchMemory(): void {
    this.memoryWatch ??= setInterval(() => this.checkMemory(), MEMORY_CHECK_MS).unref();
  }

  private checkMemory(): void {
    if (this.byFunction.size === 0 && this.memoryWatch) {
      clearInterval(this.memoryWatch);
      this.memoryWatch = null;
      return;
    }
    const limit = (this.o.memoryMb + PROCESS_BASE_MIB) * 1024;
    for (const h of this.byFunction.values()) {
      if (!h.alive || residentKiB(h.pid) <= limit) continue;
      h.overMemory = true;
      this.kill(h);
      if (h.functionId) this.o.onLog(h.functionId, 'error', `The function exceeded its memory limit (${this.o.memoryMb} MiB) and was restarted.`);
    }
  }

  /** Process ids of the warm function processes (for tests and diagnostics). */
  pidOf(functionId: string): number | null {
    const h = this.byFunction.get(functionId);
    return h?.alive ? h.pid : null;
  }

  /** Starts the spare process in the background, so the next cold start is quick. */
  warm(): void {
    if (this.closed || this.spare || Date.now() < this.retryAt) return;
    const p = this.spawn();
    this.spare = p;
    p.catch(() => {
      if (this.spare === p) this.spare = null;
    });
  }

  prepare(fn: RuntimeFunction): void {
    if (this.closed) return;
    this.acquire(fn).catch(() => {});
  }

  async load(fn: RuntimeFunction): Promise<void> {
    await this.acquire(fn);
  }

  discard(functionId: string): void {
    const h = this.byFunction.get(functionId);
    if (h) this.kill(h);
  }

  /**
   * Health: down while starts are failing (backoff) or when the deno binary is missing; a
   * warm process, if any, must answer. Never starts a process itself, so health stays fast.
   */
  async check(): Promise<void> {
    if (this.closed) throw new Error('function runtime closed');
    if (Date.now() < this.retryAt) throw new Error('function processes failed to start recently');
    accessSync(this.o.binary, constants.X_OK);
    const h = [...this.byFunction.values()].find((x) => x.alive && x.version);
    if (!h) return;
    await checkHost(h, 2000);
  }

  async invoke(fn: RuntimeFunction, req: InvokeRequest): Promise<InvokeResponse> {
    const host = await this.acquire(fn);
    host.lastUsed = Date.now();
    const target = host.worker!;
    try {
      return await sendToHost(target, fn, req, {
        timeoutMs: this.o.timeoutMs,
        onTimeout: () => this.kill(host),
        log: (message) => this.o.onLog(fn.id, 'error', message),
        blameCut: (cause) => this.blameCut(fn, host, cause),
      });
    } catch (err) {
      // Sent to a worker that a newer version replaced in the meantime: that is no fault of
      // the process. A call without a body goes again to the new worker.
      if (err instanceof HostUnreachable && host.alive && host.worker !== target) {
        if (!req.body) return this.invoke(fn, req);
        throw new AppError('FUNCTION_RUNTIME_UNAVAILABLE', { message: 'The function was redeployed during the call; try again.' });
      }
      if (!(err instanceof HostUnreachable)) throw err;
      throw await this.died(host, err.cause);
    }
  }

  /**
   * A response cut after its head: when the process still answers, the function's body
   * failed (its stream threw or was aborted) and the process is kept; else the process died.
   */
  private async blameCut(fn: RuntimeFunction, host: Host, cause: Error): Promise<AppError> {
    const answers = host.alive && !host.overMemory && (await checkHost(host, 2000).then(() => true, () => false));
    if (!answers) return this.died(host, cause);
    this.o.onLog(fn.id, 'error', "The function's response body failed part-way (its stream threw an error or was aborted).");
    return new AppError('FUNCTION_ERROR', { message: "The function's response body failed; its logs show why." });
  }

  /** The process died under a call, or its socket is gone: stops it, and says which. */
  private async died(host: Host, cause: unknown): Promise<AppError> {
    const exit = await Promise.race([host.exited, new Promise<null>((r) => setTimeout(() => r(null), 300))]);
    this.kill(host);
    if (host.overMemory || (exit && isOutOfMemory(exit))) {
      return new AppError('FUNCTION_MEMORY_LIMIT', { message: `The function exceeded its memory limit of ${this.o.memoryMb} MiB.` });
    }
    return new AppError('FUNCTION_RUNTIME_UNAVAILABLE', { cause });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    if (this.memoryWatch) clearInterval(this.memoryWatch);
    const waits = [...this.all].map((h) => {
      this.kill(h);
      return h.exited;
    });
    await Promise.all(waits);
    rmSync(this.baseDir, { recursive: true, force: true });
  }

  /** Stops a process (SIGKILL: it may be stuck in a loop). Its requests fail; the next call starts another. */
  kill(h: Host): void {
    if (h.alive) h.proc.kill('SIGKILL');
    this.forget(h);
  }

  private forget(h: Host): void {
    h.alive = false;
    if (h.functionId && this.byFunction.get(h.functionId) === h) this.byFunction.delete(h.functionId);
  }

  /** The warm process of `fn` at its current version, deploying it first if needed. */
  private async acquire(fn: RuntimeFunction): Promise<Host> {
    for (;;) {
      const current = this.byFunction.get(fn.id);
      if (current?.alive && current.version === fn.version) return current;
      // Loaded by the check of the save that made this version: the same code and secrets.
      if (current?.alive && fn.adopts !== undefined && current.version === fn.adopts) {
        current.version = fn.version;
        return current;
      }
      const pending = this.deploying.get(fn.id);
      if (pending?.version === fn.version) return pending.host;
      if (pending) {
        // Another version of this function is being loaded (e.g. a save and a call that saw
        // a newer secret): let it finish, then look again, so two loads never race.
        await pending.host.catch(() => {});
        continue;
      }
      // The next spare starts after this deploy, not during it: both compete for the CPU.
      const host: Promise<Host> = this.deploy(fn, current?.alive ? current : null).finally(() => {
        if (this.deploying.get(fn.id)?.host === host) this.deploying.delete(fn.id);
        this.warm();
      });
      this.deploying.set(fn.id, { version: fn.version, host });
      return host;
    }
  }

  private async deploy(fn: RuntimeFunction, reuse: Host | null): Promise<Host> {
    const host = reuse ?? (await this.takeSpareOrSpawn());
    if (!reuse) {
      host.functionId = fn.id;
      host.lastUsed = Date.now(); // newest: never the one evicted below
      const old = this.byFunction.get(fn.id);
      if (old && old !== host) this.kill(old);
      this.byFunction.set(fn.id, host);
      this.watchMemory();
      this.evictOverflow();
    }
    const { code, secrets } = await fn.load();
    const result = await deployTo(host, { version: fn.version, code, secrets }, this.o.timeoutMs).catch(async (err: HostUnreachable) => {
      this.kill(host);
      const exit = await host.exited;
      if (host.overMemory || isOutOfMemory(exit)) throw new AppError('FUNCTION_MEMORY_LIMIT', { cause: err });
      if (err.timedOut) {
        throw new AppError('FUNCTION_TIMEOUT', { message: 'The function took too long to load.', cause: err });
      }
      throw new AppError('FUNCTION_RUNTIME_UNAVAILABLE', { cause: err });
    });
    if (result.loaded && !result.socket) {
      this.kill(host);
      throw new AppError('FUNCTION_RUNTIME_UNAVAILABLE', { message: 'The function host did not say where it serves.' });
    }
    // A module that failed to load changed nothing in the host: the process and the version
    // it serves (if any) are kept.
    if (!result.loaded) throw loadRefused(result);
    // The replaced worker's calls in flight finish; it closes its connections once drained.
    void host.worker?.dispatcher.close().catch(() => {});
    host.worker = { socketPath: result.socket!, dispatcher: hostPool({ socketPath: result.socket! }) };
    host.version = fn.version;
    return host;
  }

  private evictOverflow(): void {
    const max = this.o.maxHosts ?? 16;
    if (this.byFunction.size <= max) return;
    const lru = [...this.byFunction.values()].sort((a, b) => a.lastUsed - b.lastUsed)[0];
    if (lru) this.kill(lru);
  }

  /** The spare process (taken at once, so two cold starts never share it), else a new one. */
  private async takeSpareOrSpawn(): Promise<Host> {
    if (this.closed) throw new AppError('FUNCTION_RUNTIME_UNAVAILABLE', { message: 'The function runtime is shutting down.' });
    const spare = this.spare;
    if (spare) {
      this.spare = null;
      const h = await spare.catch(() => null);
      if (h?.alive) return h;
    }
    if (Date.now() < this.retryAt) {
      throw new AppError('FUNCTION_RUNTIME_UNAVAILABLE', { message: 'The function runtime failed to start; retrying shortly.' });
    }
    return this.spawn();
  }

  /** Starts one Deno host process and resolves once it listens. */
  private spawn(): Promise<Host> {
    const n = ++this.seq;
    const tmpDir = path.join(this.baseDir, `t${n}`);
    const socketDir = path.join(this.baseDir, `s${n}`);
    mkdirSync(tmpDir);
    mkdirSync(socketDir);
    const controlSocket = path.join(socketDir, 'control.sock');
    const proc = spawn(this.o.binary, hostArgs({ socketDir, tmpDir, memoryMb: this.o.memoryMb }), {
      // A minimal environment: none of Plinth's secrets reach the function processes.
      env: {
        HOME: tmpDir,
        TMPDIR: tmpDir,
        DENO_DIR: path.join(this.baseDir, 'deno'),
        DENO_NO_UPDATE_CHECK: '1',
        NO_COLOR: '1',
      },
      // stdin stays open for the host's lifetime: it exits when Plinth does, however Plinth ends.
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let resolveExit!: (e: Exit) => void;
    const exited = new Promise<Exit>((r) => (resolveExit = r));
    const host: Host = {
      pid: proc.pid ?? -1,
      socketPath: controlSocket,
      dispatcher: hostPool({ socketPath: controlSocket }, 4),
      worker: null,
      functionId: null,
      version: null,
      lastUsed: Date.now(),
      alive: true,
      overMemory: false,
      exited,
      proc,
    };
    this.all.add(host);
    let stderr = '';
    proc.stderr!.setEncoding('utf8');
    proc.stderr!.on('data', (d: string) => {
      stderr = (stderr + d).slice(-4000);
    });
    return new Promise<Host>((resolve, reject) => {
      let listening = false;
      const timer = setTimeout(() => {
        proc.kill('SIGKILL');
        reject(new Error('deno host did not start in time'));
      }, SPAWN_TIMEOUT_MS);
      createInterface({ input: proc.stdout! }).on('line', (line) => {
        let m: { level?: unknown; message?: unknown };
        try {
          m = JSON.parse(line);
        } catch {
          return;
        }
        if (m.level === 'host') {
          if (!listening) {
            listening = true;
            clearTimeout(timer);
            this.failures = 0;
            resolve(host);
          }
          return;
        }
        if (host.functionId && typeof m.level === 'string' && typeof m.message === 'string') {
          this.o.onLog(host.functionId, m.level, m.message);
        }
      });
      proc.on('error', (err) => {
        clearTimeout(timer);
        this.all.delete(host);
        this.forget(host);
        this.failures++;
        this.retryAt = Date.now() + Math.min(100 * 2 ** this.failures, MAX_BACKOFF_MS);
        this.o.warn?.('function runtime failed to start', { err: err.message });
        resolveExit({ code: null, signal: null });
        reject(err);
      });
      proc.on('exit', (code, signal) => {
        clearTimeout(timer);
        this.all.delete(host);
        void host.dispatcher.destroy().catch(() => {});
        void host.worker?.dispatcher.destroy().catch(() => {});
        const wasAlive = host.alive;
        this.forget(host);
        rmSync(tmpDir, { recursive: true, force: true });
        rmSync(socketDir, { recursive: true, force: true });
        if (!listening) {
          this.failures++;
          this.retryAt = Date.now() + Math.min(100 * 2 ** this.failures, MAX_BACKOFF_MS);
          this.o.warn?.('function runtime failed to start', { code, signal, stderr: stderr.slice(-1000) });
          reject(new Error(`deno host exited before listening (${signal ?? code})`));
        } else if (wasAlive && !this.closed) {
          this.o.warn?.('function process exited', { functionId: host.functionId, code, signal });
          if (host.functionId && (host.overMemory || isOutOfMemory({ code, signal }))) {
            this.o.onLog(host.functionId, 'error', `The function exceeded its memory limit (${this.o.memoryMb} MiB) and was restarted.`);
          }
        }
        resolveExit({ code, signal });
      });
    }).catch((err) => {
      throw new AppError('FUNCTION_RUNTIME_UNAVAILABLE', { cause: err });
    });
  }
}

/** V8 aborts the process on heap exhaustion (Deno exits by SIGTRAP or SIGABRT). */
export function isOutOfMemory(e: Exit): boolean {
  return e.signal === 'SIGTRAP' || e.signal === 'SIGABRT' || e.code === 133 || e.code === 134;
}

/** Resident set size of a process in KiB (0 when it is gone or /proc is unavailable). */
function residentKiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** Removes the temp dirs of pools whose server died without cleaning up (e.g. kill -9). */
function removeStaleDirs(root: string): void {
  try {
    for (const name of readdirSync(root)) {
      if (!name.startsWith(DIR_PREFIX)) continue;
      const dir = path.join(root, name);
      let owner: number;
      try {
        owner = Number(readFileSync(path.join(dir, 'owner.pid'), 'utf8'));
      } catch {
        continue; // not ours to judge
      }
      if (!Number.isInteger(owner) || owner <= 0 || processAlive(owner)) continue;
      rmSync(dir, { recursive: true, force: true });
    }
  } catch {
    // best effort
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
