// The warm function processes watched: stopped when idle too long, and when resident past
// their memory limit — V8's heap limit (--max-old-space-size) does not count ArrayBuffers
// and other memory outside the JS heap.
import type { HostProcess } from './host-process.js';

// What the Deno runtime itself takes besides the function's heap: the process with its
// main isolate, the function's worker and a standby worker measure about 60 MiB.
const PROCESS_BASE_MIB = 96;
const MEMORY_CHECK_MS = 100;

export interface WatchOptions {
  memoryMb: number;
  /** A warm process unused this long is handed to `onIdle`. */
  idleMs: number;
  onIdle: (host: HostProcess) => void;
  /** A process over its memory (marked `overMemory`). */
  onOverMemory: (host: HostProcess) => void;
}

export class WarmWatch {
  private readonly sweeper: NodeJS.Timeout;
  /** Runs only while some function is warm: an idle server stays asleep. */
  private memoryTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly warm: ReadonlyMap<string, HostProcess>,
    private readonly opts: WatchOptions,
  ) {
    this.sweeper = setInterval(
      () => {
        const now = Date.now();
        for (const h of this.warm.values()) if (now - h.lastUsed > opts.idleMs) opts.onIdle(h);
      },
      Math.min(opts.idleMs, 60_000),
    );
    this.sweeper.unref();
  }

  /** A function became warm: its memory is checked from now on. */
  started(): void {
    this.memoryTimer ??= setInterval(() => this.checkMemory(), MEMORY_CHECK_MS).unref();
  }

  stop(): void {
    clearInterval(this.sweeper);
    this.stopMemory();
  }

  private stopMemory(): void {
    if (this.memoryTimer) clearInterval(this.memoryTimer);
    this.memoryTimer = null;
  }

  private checkMemory(): void {
    if (this.warm.size === 0) return this.stopMemory();
    const limit = (this.opts.memoryMb + PROCESS_BASE_MIB) * 1024;
    for (const h of this.warm.values()) {
      if (!h.alive || h.residentKiB() <= limit) continue;
      h.overMemory = true;
      this.opts.onOverMemory(h);
    }
  }
}
