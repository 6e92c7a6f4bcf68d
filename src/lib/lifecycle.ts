import type { HealthCheck } from './health.js';

/**
 * What each part of the composition root hands back as it starts: how it stops and how its
 * health is probed. Parts call these; they never hold the lists.
 */
export interface Lifecycle {
  /** Runs `stop` when the server closes: in reverse order of registration, a failure not stopping the rest. */
  onClose(stop: () => Promise<unknown>): void;
  /** A named probe of GET /api/health?checks=true (one per name). */
  health(name: string, check: HealthCheck): void;
}

/** The lifecycle of one composition root: the probes it registered, and `close()` that stops it all. */
export class Lifetime implements Lifecycle {
  private readonly stops: Array<() => Promise<unknown>> = [];
  private readonly probes: Record<string, HealthCheck> = {};

  onClose(stop: () => Promise<unknown>): void {
    this.stops.push(stop);
  }

  health(name: string, check: HealthCheck): void {
    if (name in this.probes) throw new Error(`health check "${name}" registered twice`);
    this.probes[name] = check;
  }

  /** The probes by name, in registration order. */
  get checks(): Readonly<Record<string, HealthCheck>> {
    return this.probes;
  }

  /** Stops everything registered, last first; each stop runs once. */
  async close(): Promise<void> {
    for (const stop of this.stops.splice(0).reverse()) await stop().catch(() => {});
  }
}
