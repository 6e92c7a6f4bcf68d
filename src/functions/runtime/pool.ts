import { accessSync, constants, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AppError } from '../../errors/index.js';
import { SpawnBackoff } from './backoff.js';
import { ApiBridge } from './bridge.js';
import { checkHost, deployLocal } from './control.js';
import { HostUnreachable, loadRefused } from './faults.js';
import { HostProcess, isOutOfMemory, type Exit } from './host-process.js';
import { WarmWatch } from './watch.js';
import { makePoolDir } from './pool-dir.js';
import { sendToHost } from './send.js';
import { hostPool, preconnect } from './transport.js';
import type { FunctionRuntime, InvokeRequest, InvokeResponse, RuntimeFunction, LogSink } from './types.js';

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
  /** Functions reach this Plinth over a bridge (bridge.ts); absent in a standalone runtime. */
  bridge?: { publicUrl: string | null };
}

/**
 * The local function runtime: one Deno process per warm function (so a function that
 * exhausts its memory limit or loops takes down only itself), one spare process kept
 * started so a cold start only loads the code, processes restarted on demand with backoff
 * when they fail to start. The pool places functions in processes and evicts them (least
 * recently used past maxHosts, idle past idleMs, over their memory); HostProcess runs one.
 */
export class HostPool implements FunctionRuntime {
  private readonly baseDir: string;
  private readonly bridge: ApiBridge | null;
  private readonly byFunction = new Map<string, HostProcess>();
  /** The deploy under way per function (one at a time: the last one asked for serves). */
  private readonly deploying = new Map<string, { version: string; host: Promise<HostProcess> }>();
  private readonly all = new Set<HostProcess>();
  private spare: Promise<HostProcess> | null = null;
  private readonly backoff = new SpawnBackoff();
  private closed = false;
  private seq = 0;
  private readonly watch: WarmWatch;

  constructor(private readonly opts: PoolOptions) {
    this.baseDir = makePoolDir(opts.tmpRoot ?? tmpdir());
    this.bridge = opts.bridge
      ? new ApiBridge(path.join(this.baseDir, 'api.sock'), opts.bridge.publicUrl, opts.warn)
      : null;
    this.watch = new WarmWatch(this.byFunction, {
      memoryMb: opts.memoryMb,
      idleMs: opts.idleMs ?? 10 * 60_000,
      // A process being loaded is not idle, however long the load takes.
      onIdle: (h) => h.functionId !== null && !this.deploying.has(h.functionId) && this.kill(h),
      onOverMemory: (h) => {
        this.kill(h);
        if (h.functionId) this.logRestart(h.functionId);
      },
    });
  }

  listening(address: AddressInfo | string): void {
    this.bridge?.listening(address);
    // Loaded before Plinth listened (a schedule due at start): without PLINTH_URL. Loaded again on the next call.
    for (const h of this.byFunction.values()) this.kill(h);
  }

  /** Process ids of the warm function processes (for tests and diagnostics). */
  pidOf(functionId: string): number | null {
    const h = this.byFunction.get(functionId);
    return h?.alive ? h.pid : null;
  }

  /** Starts the spare process in the background, so the next cold start is quick. */
  warm(): void {
    if (this.closed || this.spare || this.backoff.waiting) return;
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
    if (this.backoff.waiting) throw new Error('function processes failed to start recently');
    accessSync(this.opts.binary, constants.X_OK);
    const h = [...this.byFunction.values()].find((x) => x.alive && x.version);
    if (!h) return;
    await checkHost(h, 2000);
  }

  async invoke(fn: RuntimeFunction, req: InvokeRequest): Promise<InvokeResponse> {
    const warm = this.byFunction.get(fn.id);
    const cold = !(warm?.alive && (warm.version === fn.version || warm.version === fn.adopts));
    const host = await this.acquire(fn);
    host.lastUsed = Date.now();
    const target = host.worker!;
    try {
      const res = await sendToHost(target, fn, req, {
        timeoutMs: this.opts.timeoutMs,
        onTimeout: () => this.kill(host),
        log: (message) => this.opts.onLog(fn.id, 'error', message),
        blameCut: (cause) => this.blameCut(fn, host, cause),
      });
      res.cold = cold;
      return res;
    } catch (err) {
      // Sent to a worker that a newer version replaced in the meantime: that is no fault of
      // the process. A call without a body goes again to the new worker.
      if (err instanceof HostUnreachable && host.alive && host.worker !== target) {
        if (!req.body) return this.invoke(fn, req);
        throw new AppError('FUNCTION_RUNTIME_UNAVAILABLE', {
          message: 'The function was redeployed during the call; try again.',
        });
      }
      if (!(err instanceof HostUnreachable)) throw err;
      throw await this.died(host, err.cause);
    }
  }

  /**
   * A response cut after its head: when the process still answers, the function's body
   * failed (its stream threw or was aborted) and the process is kept; else the process died.
   */
  private async blameCut(fn: RuntimeFunction, host: HostProcess, cause: Error): Promise<AppError> {
    const answers =
      host.alive &&
      !host.overMemory &&
      (await checkHost(host, 2000).then(
        () => true,
        () => false,
      ));
    if (!answers) return this.died(host, cause);
    this.opts.onLog(
      fn.id,
      'error',
      "The function's response body failed part-way (its stream threw an error or was aborted).",
    );
    return new AppError('FUNCTION_ERROR', { message: "The function's response body failed; its logs show why." });
  }

  /** The process died under a call, or its socket is gone: stops it, and says which. */
  private async died(host: HostProcess, cause: unknown): Promise<AppError> {
    const exit = await Promise.race([host.exited, new Promise<null>((r) => setTimeout(() => r(null), 300))]);
    this.kill(host);
    if (host.overMemory || (exit && isOutOfMemory(exit))) {
      return new AppError('FUNCTION_MEMORY_LIMIT', {
        message: `The function exceeded its memory limit of ${this.opts.memoryMb} MiB.`,
      });
    }
    return new AppError('FUNCTION_RUNTIME_UNAVAILABLE', { cause });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.watch.stop();
    const waits = [...this.all].map((h) => {
      this.kill(h);
      return h.exited;
    });
    await Promise.all([...waits, this.bridge?.close()]);
    rmSync(this.baseDir, { recursive: true, force: true });
  }

  /** Stops a process (SIGKILL: it may be stuck in a loop). Its requests fail; the next call starts another. */
  kill(h: HostProcess): void {
    h.kill();
    this.forget(h);
  }

  private forget(h: HostProcess): void {
    if (h.functionId && this.byFunction.get(h.functionId) === h) this.byFunction.delete(h.functionId);
  }

  /** The warm process of `fn` at its current version, deploying it first if needed. */
  private async acquire(fn: RuntimeFunction): Promise<HostProcess> {
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
      // The next spare starts 200 ms after this deploy, off it and the first call: all need the CPU.
      const host: Promise<HostProcess> = this.deploy(fn, current?.alive ? current : null).finally(() => {
        if (this.deploying.get(fn.id)?.host === host) this.deploying.delete(fn.id);
        setTimeout(() => this.warm(), 200).unref();
      });
      this.deploying.set(fn.id, { version: fn.version, host });
      return host;
    }
  }

  private async deploy(fn: RuntimeFunction, reuse: HostProcess | null): Promise<HostProcess> {
    const host = reuse ?? (await this.takeSpareOrSpawn());
    if (!reuse) {
      host.functionId = fn.id;
      host.lastUsed = Date.now(); // newest: never the one evicted below
      const old = this.byFunction.get(fn.id);
      if (old && old !== host) this.kill(old);
      this.byFunction.set(fn.id, host);
      this.watch.started();
      this.evictOverflow();
    }
    const { code, secrets } = await fn.load();
    const plinthUrl = this.bridge?.url ?? undefined;
    const { timeoutMs } = this.opts;
    const payload = { version: fn.version, code, secrets, plinthUrl, timeoutMs };
    const { result, worker } = await deployLocal(host, payload, timeoutMs).catch(async (err: HostUnreachable) => {
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
    const socketPath = result.socket!;
    host.worker = { socketPath, dispatcher: worker ?? preconnect(hostPool({ socketPath })) };
    host.version = fn.version;
    host.lastUsed = Date.now();
    return host;
  }

  private evictOverflow(): void {
    const max = this.opts.maxHosts ?? 16;
    if (this.byFunction.size <= max) return;
    const lru = [...this.byFunction.values()].sort((a, b) => a.lastUsed - b.lastUsed)[0];
    if (lru) this.kill(lru);
  }

  /** The spare process (taken at once, so two cold starts never share it), else a new one. */
  private async takeSpareOrSpawn(): Promise<HostProcess> {
    if (this.closed)
      throw new AppError('FUNCTION_RUNTIME_UNAVAILABLE', { message: 'The function runtime is shutting down.' });
    const spare = this.spare;
    if (spare) {
      this.spare = null;
      const h = await spare.catch(() => null);
      if (h?.alive) return h;
    }
    if (this.backoff.waiting) {
      throw new AppError('FUNCTION_RUNTIME_UNAVAILABLE', {
        message: 'The function runtime failed to start; retrying shortly.',
      });
    }
    return this.spawn();
  }

  /** Starts one Deno host process and resolves once it listens. */
  private spawn(): Promise<HostProcess> {
    const n = ++this.seq;
    const host = new HostProcess({
      binary: this.opts.binary,
      memoryMb: this.opts.memoryMb,
      tmpDir: path.join(this.baseDir, `t${n}`),
      socketDir: path.join(this.baseDir, `s${n}`),
      denoDir: path.join(this.baseDir, 'deno'),
      apiSocket: this.bridge?.socketPath,
      onLog: this.opts.onLog,
      onStartFailed: (h, details) => {
        this.gone(h);
        this.backoff.failed();
        this.opts.warn?.('function runtime failed to start', details);
      },
      onExit: (h, exit, wasAlive) => {
        this.gone(h);
        if (wasAlive && !this.closed) this.exitedOnItsOwn(h, exit);
      },
    });
    this.all.add(host);
    return host.ready.then(
      () => {
        this.backoff.succeeded();
        return host;
      },
      (err: unknown) => {
        throw new AppError('FUNCTION_RUNTIME_UNAVAILABLE', { cause: err });
      },
    );
  }

  /** A process that ended without being stopped: the app log is told, and the function's log when it ran out of memory. */
  private exitedOnItsOwn(host: HostProcess, exit: Exit): void {
    this.opts.warn?.('function process exited', { functionId: host.functionId, ...exit });
    if (host.functionId && (host.overMemory || isOutOfMemory(exit))) this.logRestart(host.functionId);
  }

  private logRestart(functionId: string): void {
    this.opts.onLog(
      functionId,
      'error',
      `The function exceeded its memory limit (${this.opts.memoryMb} MiB) and was restarted.`,
    );
  }

  /** A process that ended, or never started: the pool lets go of it. */
  private gone(host: HostProcess): void {
    this.all.delete(host);
    this.forget(host);
  }
}
