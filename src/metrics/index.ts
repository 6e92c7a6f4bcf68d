import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { PoolStats } from '../db/types.js';
import { invocationTally, type InvocationTally } from './invocations.js';
import { RequestTally } from './requests.js';

/** A gauge's value from another area: one number, or one per label value (e.g. per queue). */
export type GaugeSource = () => number | Record<string, number> | Promise<number | Record<string, number>>;

/** What the metrics read when scraped (each optional: a part that is absent reports nothing). */
export interface MetricSources {
  pool?: () => PoolStats | undefined;
  logs?: () => { pending: number; written: number; dropped: number };
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The figures of several pools added up (Plinth's own and the owner role's): undefined when none has any. */
export function sumPoolStats(pools: ReadonlyArray<{ poolStats?: () => PoolStats }>): PoolStats | undefined {
  const all = pools.map((p) => p.poolStats?.()).filter((s): s is PoolStats => s !== undefined);
  if (!all.length) return undefined;
  const sum = (k: keyof PoolStats) => all.reduce((n, s) => n + s[k], 0);
  return {
    total: sum('total'),
    idle: sum('idle'),
    waiting: sum('waiting'),
    acquired: sum('acquired'),
    waitSeconds: sum('waitSeconds'),
  };
}

/** A counter whose value is read from elsewhere at scrape time. */
function counterFrom(registry: Registry, name: string, help: string, read: () => number | undefined): void {
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      const v = read();
      this.reset();
      if (v !== undefined) this.inc(v);
    },
  });
}

/**
 * Plinth's Prometheus metrics (prom-client), one registry per server: the HTTP layer and the
 * areas call the `observe…`/`count…` methods; gauges of other parts are read at scrape time
 * through the sources and the hooks (`setJobQueueDepth`, `setRealtimeSockets`).
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests: RequestTally;
  private readonly invocations: InvocationTally;
  private readonly deliveries: Counter<'kind'>;
  private readonly storageBytes: Counter<'direction'>;
  private readonly aiTokens: Counter<'kind'>;
  private jobDepth: GaugeSource | null = null;
  private sockets: (() => number) | null = null;

  constructor(sources: MetricSources = {}, opts: { processMetrics?: boolean } = {}) {
    const registers = [this.registry];
    if (opts.processMetrics !== false) collectDefaultMetrics({ register: this.registry });
    // Counted on the request path in plain numbers, added to these two when they are read.
    const fold = () => this.requests.fold();
    this.requests = new RequestTally(
      LATENCY_BUCKETS,
      new Counter({
        name: 'plinth_http_requests_total',
        help: 'HTTP requests answered, by method, route pattern and status.',
        labelNames: ['method', 'route', 'status'],
        registers,
        collect: fold,
      }),
      new Histogram({
        name: 'plinth_http_request_duration_seconds',
        help: 'Time to answer an HTTP request, by method and route pattern.',
        labelNames: ['method', 'route'],
        buckets: LATENCY_BUCKETS,
        registers,
        collect: fold,
      }),
    );
    this.invocations = invocationTally(registers, LATENCY_BUCKETS);
    this.deliveries = new Counter({
      name: 'plinth_realtime_deliveries_total',
      help: 'Realtime messages sent to sockets of this instance (one per socket), by kind (change, message).',
      labelNames: ['kind'],
      registers,
    });
    this.storageBytes = new Counter({
      name: 'plinth_storage_bytes_total',
      help: 'Bytes of storage request and response bodies, by direction (in: uploads, out: downloads).',
      labelNames: ['direction'],
      registers,
    });
    this.aiTokens = new Counter({
      name: 'plinth_ai_tokens_total',
      help: 'AI tokens used through the gateway, by kind (prompt, completion).',
      labelNames: ['kind'],
      registers,
    });
    this.poolMetrics(sources);
    this.hookMetrics();
    if (sources.logs) {
      const logs = sources.logs;
      new Gauge({
        name: 'plinth_logs_pending',
        help: 'Log lines waiting to be written to the store.',
        registers,
        collect() {
          this.set(logs().pending);
        },
      });
      counterFrom(this.registry, 'plinth_logs_written_total', 'Log lines written to the store.', () => logs().written);
      counterFrom(
        this.registry,
        'plinth_logs_dropped_total',
        'Log lines dropped (store full of waiting lines, or a failed write).',
        () => logs().dropped,
      );
    }
  }

  private poolMetrics(sources: MetricSources): void {
    const pool = sources.pool;
    if (!pool) return;
    const registers = [this.registry];
    new Gauge({
      name: 'plinth_db_pool_connections',
      help: 'Database pool connections, by state (total, idle, in_use).',
      labelNames: ['state'],
      registers,
      collect() {
        const s = pool();
        if (!s) return;
        this.set({ state: 'total' }, s.total);
        this.set({ state: 'idle' }, s.idle);
        this.set({ state: 'in_use' }, s.total - s.idle);
      },
    });
    new Gauge({
      name: 'plinth_db_pool_waiting',
      help: 'Callers waiting for a database connection now.',
      registers,
      collect() {
        const s = pool();
        if (s) this.set(s.waiting);
      },
    });
    counterFrom(
      this.registry,
      'plinth_db_pool_acquires_total',
      'Connections taken from the pool for transactions.',
      () => pool()?.acquired,
    );
    counterFrom(
      this.registry,
      'plinth_db_pool_wait_seconds_total',
      'Seconds transactions waited for a pool connection, in all.',
      () => pool()?.waitSeconds,
    );
  }

  private hookMetrics(): void {
    const self = this;
    const registers = [this.registry];
    new Gauge({
      name: 'plinth_realtime_sockets',
      help: 'Realtime (Socket.IO) connections open on this instance.',
      registers,
      collect() {
        if (self.sockets) this.set(self.sockets());
      },
    });
    new Gauge({
      name: 'plinth_job_queue_depth',
      help: 'Jobs waiting, by queue (filled by the jobs area through setJobQueueDepth).',
      labelNames: ['queue'],
      registers,
      async collect() {
        this.reset();
        if (!self.jobDepth) return;
        const v = await self.jobDepth();
        if (typeof v === 'number') this.set({ queue: 'all' }, v);
        else for (const [queue, n] of Object.entries(v)) this.set({ queue }, n);
      },
    });
  }

  /** One answered HTTP request; `route` is the route pattern (never the raw path: bounded labels). */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.requests.add(method, route, status, seconds);
  }

  observeInvocation(cold: boolean, ok: boolean, seconds: number): void {
    this.invocations.add(cold, ok, seconds);
  }

  countDeliveries(kind: 'change' | 'message', n: number): void {
    if (n > 0) this.deliveries.inc({ kind }, n);
  }

  countStorageBytes(direction: 'in' | 'out', bytes: number): void {
    if (bytes > 0) this.storageBytes.inc({ direction }, bytes);
  }

  countAiTokens(prompt: number, completion: number): void {
    if (prompt > 0) this.aiTokens.inc({ kind: 'prompt' }, prompt);
    if (completion > 0) this.aiTokens.inc({ kind: 'completion' }, completion);
  }

  /**
   * The hook of the jobs area: a callback read at every scrape, giving the jobs waiting (one
   * number, or one per queue name). Until it is set the gauge has no samples.
   */
  setJobQueueDepth(source: GaugeSource | null): void {
    this.jobDepth = source;
  }

  /** The realtime server's count of open sockets, read at scrape time. */
  setRealtimeSockets(source: (() => number) | null): void {
    this.sockets = source;
  }

  /** The exposition text and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
