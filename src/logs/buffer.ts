import type { LogRecord, PendingLine } from './types.js';
import { outsideReadOnly } from '../db/read-only.js';

export interface BufferOptions {
  /** Lines held while the store is slow or down; past it the oldest are dropped. */
  maxPending?: number;
  /** Lines per write to the store. */
  batchSize?: number;
  /** How long a line may wait for its batch. */
  flushMs?: number;
  onError?: (err: unknown) => void;
}

/** What the buffer did since start, for health and metrics. */
export interface BufferStats {
  written: number;
  dropped: number;
  failedBatches: number;
  lastError: string | null;
}

/**
 * The bounded, batched queue between the callers and the store: `push` only appends (no
 * promise, no I/O); one write runs at a time, at most `flushMs` after the first waiting line.
 * A full queue drops its oldest lines, never the caller's request.
 */
export class LogBuffer {
  private pending: PendingLine[] = [];
  private flushing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private early = false;
  private readonly max: number;
  private readonly batch: number;
  readonly stats: BufferStats = { written: 0, dropped: 0, failedBatches: 0, lastError: null };

  constructor(
    private readonly sink: (batch: LogRecord[]) => Promise<void>,
    private readonly opts: BufferOptions = {},
  ) {
    this.max = opts.maxPending ?? 20_000;
    this.batch = opts.batchSize ?? 1000;
  }

  push(record: PendingLine): void {
    if (this.pending.length >= this.max) {
      // Drop a slice at once: shifting one line per push would copy the array every time.
      const n = Math.max(1, Math.floor(this.max / 10));
      this.pending.splice(0, n);
      this.stats.dropped += n;
    }
    this.pending.push(record);
    if (this.pending.length >= this.batch && !this.early) this.flushSoon();
    else this.schedule();
  }

  /**
   * A full batch is written in the next turn of the loop, not after the timer: a line that
   * waits 500 ms outlives the young generation's collections and is copied into the old one,
   * which at 10,000 lines a second cost more than building and sending it (issue #38).
   */
  private flushSoon(): void {
    this.early = true;
    outsideReadOnly(() =>
      setImmediate(() => {
        void this.flush().finally(() => {
          this.early = false;
        });
      }),
    );
  }

  private schedule(): void {
    // A line written inside a read-only scope (an MCP read-only call) is stored outside it.
    this.timer ??= outsideReadOnly(() =>
      setTimeout(() => {
        this.timer = null;
        void this.flush().then(() => this.pending.length && this.schedule());
      }, this.opts.flushMs ?? 500).unref(),
    );
  }

  get size(): number {
    return this.pending.length;
  }

  /**
   * Writes the lines waiting now, in batches, after the batch already on its way; resolves when
   * they are stored or have failed. Lines appended meanwhile wait for their timer (under steady
   * traffic a read's flush must end).
   */
  async flush(): Promise<void> {
    let left = this.pending.length;
    // The batch on its way holds older lines: a read after a write waits for it too.
    if (this.flushing) await this.flushing;
    while (left > 0 && this.pending.length) {
      if (this.flushing) {
        await this.flushing;
        continue;
      }
      const lines = this.pending.splice(0, this.batch);
      left -= lines.length;
      const batch = this.build(lines);
      if (batch.length) await this.write(batch);
    }
  }

  /**
   * Lines appended as functions are built here, in the flush, not on the caller's path; one
   * whose function throws is dropped and counted, never the flush (the writer never throws).
   */
  private build(lines: PendingLine[]): LogRecord[] {
    const batch: LogRecord[] = [];
    for (const line of lines) {
      try {
        batch.push(typeof line === 'function' ? line() : line);
      } catch (err) {
        this.stats.dropped++;
        this.opts.onError?.(err);
      }
    }
    return batch;
  }

  private write(batch: LogRecord[]): Promise<void> {
    this.flushing = this.sink(batch)
      .then(
        () => {
          this.stats.written += batch.length;
          this.stats.lastError = null;
        },
        (err: unknown) => {
          // The store is down or refused the batch: these lines are lost, later ones still try.
          this.stats.dropped += batch.length;
          this.stats.failedBatches++;
          this.stats.lastError = err instanceof Error ? err.message : String(err);
          this.opts.onError?.(err);
        },
      )
      .finally(() => {
        this.flushing = null;
      });
    return this.flushing;
  }

  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    while (this.pending.length || this.flushing) await this.flush();
  }
}
