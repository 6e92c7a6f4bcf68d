// How many connections Plinth's own pool keeps when idle, and how soon it closes the others
// (openPostgres's `keepIdle`; docs/benchmarks.md, branch start40).

/**
 * The connections Plinth's own pool keeps open when idle: an idle server's health checks, the
 * webhook relay's and schedule clock's checks and the job queue's asks, one after the other.
 */
export const KEEP_IDLE = 2;

/**
 * How long a connection beyond a pool's `keepIdle` stays open unused (pg.Pool's default, 10 s,
 * for all): a start's burst (its areas side by side, the job queue's start) held ≈ 8 idle
 * backends (≈ 1.5 MiB each) through the first 10 s of an idle server.
 */
export const BURST_IDLE_MS = 2000;
