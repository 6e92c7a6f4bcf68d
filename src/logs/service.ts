import type { Queryable } from '../db/types.js';
import { AppError } from '../errors/index.js';
import { LogBuffer, type BufferStats } from './buffer.js';
import { LogStore, type RouteMinute } from './store.js';
import { LineTally, type TallySummary } from './tally.js';
import {
  INSFORGE_SOURCES,
  KNOWN_SOURCES,
  SOURCE_NAME,
  type LogFilter,
  type LogLevel,
  type LogPage,
  type LogRecord,
  type LogWriter,
} from './types.js';

export interface LogsOptions {
  /** false: lines go to stdout only, nothing is stored (reads show what was stored before). */
  store: boolean;
  retentionDays: number;
  maxRows: number;
  /** Lines held while the database is slow (default 20,000); the oldest go first. */
  maxPending?: number;
  flushMs?: number;
  /** How often retention runs, at most (after a write; default one minute). */
  pruneEveryMs?: number;
  onError?: (err: unknown) => void;
}

const MAX_MESSAGE = 4096;

/**
 * The log store: `write` from any area (never waits), batched into system.logs, pruned to
 * the retention and the row bound after writes; reads for the admin endpoints.
 */
export class LogsService implements LogWriter {
  readonly store: LogStore;
  private readonly buffer: LogBuffer;
  private readonly tallies: LineTally[] = [];
  private lastPrune = 0;
  private pruneIsJob = false;
  private closed = false;

  constructor(
    db: Queryable,
    private readonly opts: LogsOptions,
  ) {
    this.store = new LogStore(db);
    this.buffer = new LogBuffer((batch) => this.persist(batch), {
      maxPending: opts.maxPending,
      flushMs: opts.flushMs,
      onError: opts.onError,
    });
  }

  /** False with LOGS_STORE=false: callers may skip building lines. */
  get enabled(): boolean {
    return this.opts.store && !this.closed;
  }

  write(source: string, level: LogLevel, message: string, fields: Record<string, unknown> = {}): void {
    if (!this.opts.store || this.closed) return;
    this.buffer.push({
      time: Date.now(),
      source,
      level,
      message: message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}…` : message,
      fields,
    });
  }

  /**
   * Appends a line that `build` makes when its batch is written: the caller's path pays one
   * append (the request log line, src/http/plugins/observe.ts). `build` must capture values,
   * not objects that change after the call.
   */
  defer(build: () => LogRecord): void {
    if (!this.opts.store || this.closed) return;
    this.buffer.push(build);
  }

  /**
   * A tally whose line (`describe` of what it counted) is stored once a minute instead of a line
   * per event (the health probes, http/front-lane.ts); this store's flush and close take it too.
   */
  tally(describe: (s: TallySummary) => LogRecord): LineTally {
    const tally = new LineTally(describe, (r) => this.defer(() => r));
    this.tallies.push(tally);
    return tally;
  }

  private takeTallies(): void {
    for (const t of this.tallies) t.take();
  }

  private async persist(batch: Parameters<LogStore['insert']>[0]): Promise<void> {
    await this.store.insert(batch);
    if (!this.pruneIsJob && Date.now() - this.lastPrune >= (this.opts.pruneEveryMs ?? 60_000)) await this.prune();
  }

  /**
   * Retention runs as a scheduled job from now on (automation.ts: housekeeping), not after
   * writes in this process; PGlite, without jobs, keeps the in-process path.
   */
  pruneByJob(): void {
    this.pruneIsJob = true;
  }

  /** Applies retention and the row bound now; returns the lines dropped. */
  async prune(): Promise<number> {
    this.lastPrune = Date.now();
    return this.store.prune(this.opts.retentionDays, this.opts.maxRows);
  }

  /** Stores what waits (reads call it, so a line written just before is found). */
  flush(): Promise<void> {
    this.takeTallies();
    return this.buffer.flush();
  }

  /** Plinth's name of a source in a URL (InsForge's names too); LOG_SOURCE_NOT_FOUND otherwise. */
  async resolveSource(name: string): Promise<string> {
    const source = INSFORGE_SOURCES[name] ?? name;
    if ((KNOWN_SOURCES as readonly string[]).includes(source)) return source;
    if (SOURCE_NAME.test(source) && (await this.store.sources()).some((s) => s.name === source)) return source;
    throw new AppError('LOG_SOURCE_NOT_FOUND', { message: `No log source "${name.slice(0, 64)}".` });
  }

  async read(filter: LogFilter): Promise<LogPage> {
    await this.flush();
    return this.store.read(filter);
  }

  /** Every known source and every source with lines, with their counts. */
  async sources(): Promise<Array<{ name: string; count: number; lastAt: string | null }>> {
    await this.flush();
    const stored = await this.store.sources();
    const names = [...new Set([...KNOWN_SOURCES, ...stored.map((s) => s.name)])].sort();
    return names.map((name) => {
      const s = stored.find((x) => x.name === name);
      return { name, count: s?.count ?? 0, lastAt: s?.lastAt ?? null };
    });
  }

  async stats(f: { from?: string; to?: string; route?: string; limit?: number }): Promise<RouteMinute[]> {
    await this.flush();
    return this.store.stats(f);
  }

  /** The writer's state, for health and metrics. */
  state(): { store: boolean; pending: number } & BufferStats {
    return { store: this.opts.store, pending: this.buffer.size, ...this.buffer.stats };
  }

  /** Writes what waits; later lines are ignored (the database closes next). */
  close(): Promise<void> {
    this.takeTallies();
    this.closed = true;
    return this.buffer.close();
  }
}
