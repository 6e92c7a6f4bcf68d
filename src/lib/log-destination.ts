import { write } from 'node:fs';

const RETRY_MS = 50;

/**
 * Where log lines go (stdout by default), built so that a broken or stalled reader can never
 * keep the process alive or hold up a request: lines are written asynchronously, at most
 * `maxPendingBytes` wait (more are dropped and counted), and the first write error but EAGAIN
 * (EPIPE: the reader has gone) turns the destination off for good. pino's own destination
 * retries a failed synchronous write every 100 ms without end when the process exits with
 * lines pending on a pipe whose reader is gone (docs/decisions.md).
 */
export class LogDestination {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private writing = false;
  private waiters: Array<() => void> = [];
  /** Set once a write failed: nothing is written any more. */
  broken = false;
  /** Lines dropped because the reader fell too far behind. */
  dropped = 0;

  constructor(
    private readonly fd = 1,
    private readonly maxPendingBytes = 8 * 1024 * 1024,
  ) {}

  /** pino's stream interface: takes one serialized line, never blocks. */
  write(line: string): boolean {
    if (this.broken) return true;
    const buf = Buffer.from(line);
    if (this.pendingBytes + buf.length > this.maxPendingBytes) {
      this.dropped++;
      return true;
    }
    this.pending.push(buf);
    this.pendingBytes += buf.length;
    if (!this.writing) this.next();
    return true;
  }

  /** Resolves once every pending line is written (or the destination broke), or after `ms`. */
  drain(ms: number): Promise<void> {
    if (!this.writing) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      timer.unref();
      this.waiters.push(() => (clearTimeout(timer), resolve()));
    });
  }

  private next(): void {
    if (this.broken || this.pending.length === 0) {
      this.writing = false;
      for (const w of this.waiters.splice(0)) w();
      return;
    }
    this.writing = true;
    const chunk = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending);
    this.pending = [];
    write(this.fd, chunk, 0, chunk.length, null, (err, n) => {
      if (err) {
        // A full non-blocking pipe: try again a little later (the timer holds no exit back).
        if ((err as NodeJS.ErrnoException).code === 'EAGAIN') {
          this.pending.unshift(chunk);
          return void setTimeout(() => this.next(), RETRY_MS).unref();
        }
        this.broken = true;
        this.pending = [];
        this.pendingBytes = 0;
      } else {
        this.pendingBytes -= n;
        if (n < chunk.length) this.pending.unshift(chunk.subarray(n));
      }
      this.next();
    });
  }
}
