/** The per-connection limits (REALTIME_* configuration). */
export interface RealtimeLimits {
  maxSubscriptions: number;
  messagesPerSecond: number;
  maxPayloadBytes: number;
  /** Bytes queued for one connection beyond which it is a slow consumer and is closed. */
  maxBufferBytes: number;
}

/**
 * A token bucket: `perSecond` events a second on average, bursts up to one second's worth.
 * `take` answers false when the event is over the limit.
 */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = perSecond;
    this.last = now();
  }

  take(): boolean {
    const t = this.now();
    this.tokens = Math.min(this.perSecond, this.tokens + ((t - this.last) / 1000) * this.perSecond);
    this.last = t;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** The size of a value once sent as JSON, or Infinity when it cannot be (cycles, BigInt). */
export function jsonSize(value: unknown): number {
  try {
    const s = JSON.stringify(value);
    return s === undefined ? 0 : Buffer.byteLength(s);
  } catch {
    return Infinity;
  }
}
