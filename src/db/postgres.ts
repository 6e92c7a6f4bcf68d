import pg from 'pg';
import {
  SHAPES_PER_CONNECTION,
  type Db,
  type Queryable,
  type QueryOptions,
  type QueryResult,
  type Statement,
} from './types.js';
import { pgTemporalText } from './type-parsers.js';
import { translatePgError } from './errors.js';
import { AppError } from '../errors/index.js';
import { PgListener } from './listen.js';
import { BURST_IDLE_MS } from './pool-idle.js';
import { beginStatement, readOnlyAware } from './read-only.js';

// Match PGlite's parsing so both backends hand the same values to the domain code:
// int8 (counts) as numbers, numeric stays a string.
pg.types.setTypeParser(20, (v) => Number(v));

const CONNECT_TIMEOUT_MS = 3000;

/** pg-pool's connect timeout and a client that lost its server carry no code: name them here. */
function translate(err: unknown): unknown {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (
    err instanceof Error &&
    e?.code === undefined &&
    /^(timeout exceeded when trying to connect|Connection terminated|Client has encountered a connection error)/.test(
      err.message,
    )
  ) {
    return new AppError('DATABASE_UNAVAILABLE', { cause: err });
  }
  return translatePgError(err);
}

// The shapes prepared on each connection, least recently used first (Map keeps insertion order).
const shapesOf = new WeakMap<object, Map<string, true>>();

/**
 * Keeps at most SHAPES_PER_CONNECTION shapes prepared on a checked-out client: using one moves
 * it to the end; a new one past the bound deallocates the oldest (and tells node-pg, which
 * remembers what it parsed per connection, so the name is parsed again if it comes back).
 */
async function admitShape(client: pg.PoolClient, name: string): Promise<void> {
  let shapes = shapesOf.get(client);
  if (!shapes) shapesOf.set(client, (shapes = new Map()));
  if (shapes.delete(name)) {
    shapes.set(name, true);
    return;
  }
  // Only a shape that ran (so is prepared) is recorded: see `query` below.
  if (shapes.size < SHAPES_PER_CONNECTION) return;
  const oldest = shapes.keys().next().value as string;
  shapes.delete(oldest);
  await client.query(`deallocate ${oldest}`);
  const parsed = parsedOf(client);
  if (parsed) delete parsed[oldest];
}

/** node-pg's record of the statements parsed on this connection (set once Postgres parsed one). */
function parsedOf(client: pg.PoolClient): Record<string, string> | undefined {
  return (client as unknown as { connection?: { parsedStatements?: Record<string, string> } }).connection
    ?.parsedStatements;
}

/** Records a shape Postgres parsed (so it is prepared), also when its execution then failed. */
function recordShape(client: pg.PoolClient, name: string): void {
  if (parsedOf(client)?.[name] !== undefined) shapesOf.get(client)?.set(name, true);
}

/**
 * Holds what the client writes until the event loop's next turn (setImmediate): the messages
 * of the statements sent in the meantime leave in one write instead of one each.
 */
function holdWrites(client: pg.PoolClient): void {
  const stream = (client as unknown as { connection?: { stream?: { cork?(): void; uncork?(): void } } }).connection
    ?.stream;
  if (!stream?.cork || !stream.uncork) return;
  stream.cork();
  setImmediate(() => stream.uncork?.());
}

/**
 * A transaction's `begin` (written without waiting for its answer) and its commit when that was
 * sent behind its last statement (QueryOptions.last); each resolves to its error or null.
 */
interface Ending {
  begun: Promise<unknown>;
  commit: Promise<unknown> | null;
  /** The pool logs in as the authenticator: no statement waits for the `begin`'s answer. */
  unguarded: boolean;
}

/**
 * Waits for the transaction's `begin` to be answered before a statement is written, unless the
 * statement may go before (QueryOptions.beforeBegin, or any on the authenticator's pool, whose
 * login can do nothing: src/db/owner.ts): a `begin` that failed would leave the statements
 * behind it to run each in a transaction of its own, with this connection's rights.
 */
async function opened(ending: Ending | undefined, opts: QueryOptions | undefined): Promise<void> {
  if (!ending) return;
  // Refused before it is written: behind the commit it would run on its own, outside the transaction.
  if (ending.commit) throw new Error('A statement after the last one of the transaction');
  if (opts?.beforeBegin || ending.unguarded) return;
  const failed = await ending.begun;
  if (failed) throw failed;
}

/** Sends `commit` behind a transaction's last statement (`opened` refuses any statement after it). */
function sendLast(client: pg.PoolClient, ending: Ending | undefined, last: boolean | undefined): void {
  if (ending && last)
    ending.commit = client.query('commit').then(
      () => null,
      (err: unknown) => err,
    );
}

/**
 * Queries on a pool or a checked-out client; a Statement named (prepared) when `prepare`, a
 * shape only on a checked-out client. `ending`: the client is in a transaction (see `last`).
 */
function queryable(q: pg.Pool | pg.PoolClient, prepare: boolean, ending?: Ending): Queryable {
  const client = q instanceof pg.Pool ? null : q;
  return {
    async query<T>(
      sql: string | Statement,
      params: readonly unknown[] = [],
      opts?: QueryOptions,
    ): Promise<QueryResult<T>> {
      const values = params as unknown[];
      const named = typeof sql !== 'string' && prepare && (!sql.shape || client !== null);
      const types = opts?.temporalText ? { types: pgTemporalText } : {};
      const config =
        typeof sql === 'string'
          ? { text: sql, values, ...types }
          : named
            ? { name: sql.name, text: sql.text, values, ...types }
            : { text: sql.text, values, ...types };
      try {
        await opened(ending, opts);
        const shape = named && client && typeof sql !== 'string' && sql.shape ? sql.name : null;
        if (shape) await admitShape(client!, shape);
        let res: pg.QueryResult | pg.QueryResult[];
        try {
          // Text and values on their own where they suffice: node-pg copies a config object
          // (every property descriptor) on each query.
          const pending = named || opts?.temporalText ? q.query(config) : q.query(config.text, values);
          if (client) sendLast(client, ending, opts?.last);
          res = (await pending) as pg.QueryResult | pg.QueryResult[];
        } finally {
          if (shape) recordShape(client!, shape);
        }
        // A script of several statements (no parameters) answers once per statement: keep the last.
        const r = Array.isArray(res) ? res[res.length - 1]! : res;
        return {
          rows: (r.rows ?? []) as T[],
          rowCount: r.rowCount ?? r.rows?.length ?? 0,
          fields: r.fields?.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID })),
        };
      } catch (err) {
        throw translate(err);
      }
    },
    async exec(sql: string) {
      try {
        await opened(ending, undefined);
        await q.query(sql);
      } catch (err) {
        throw translate(err);
      }
    },
  };
}

/**
 * Where Plinth's own connection resolves names: Postgres's catalog only. That connection has
 * more rights than the owner role (on the embedded server it is a superuser), and an operator
 * or function the owner creates in `public` with an exact match of the argument types would
 * otherwise win over pg_catalog's (CVE-2018-1058's shape) in Plinth's own catalog queries.
 * Callers' transactions set their own (src/database/caller.ts).
 */
export const PINNED_SEARCH_PATH = 'pg_catalog, pg_temp';

/**
 * A client class whose connect sets `search_path` before the pool hands the connection out
 * (pg-pool calls `connect(callback)`), so no query of the caller is pipelined behind it.
 */
function pinnedClient(searchPath: string): typeof pg.Client {
  return class PinnedClient extends pg.Client {
    override connect(): Promise<pg.Client>;
    override connect(callback: Parameters<pg.Client['connect']>[0]): void;
    override connect(callback?: Parameters<pg.Client['connect']>[0]): Promise<pg.Client> | undefined {
      const ready = super.connect().then(async () => {
        try {
          await this.query(`select set_config('search_path', $1, false)`, [searchPath]);
        } catch (err) {
          await this.end().catch(() => {}); // pg-pool forgets a client whose connect failed: close it
          throw err;
        }
        return this as pg.Client;
      });
      if (!callback) return ready;
      const done = callback as (err: Error | null, client?: pg.Client) => void;
      ready.then((client) => done(null, client), done);
      return undefined;
    }
  };
}

/** Logs in once and leaves. */
async function checkLogin(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  try {
    await client.connect();
  } catch (err) {
    throw translate(err);
  }
  await client.end();
}

/** How long transactions waited for a connection (Db.poolStats). */
interface Waits {
  acquired: number;
  waitSeconds: number;
}

/** Db.transaction on a pool: `fn` in one transaction on one client, committed, or rolled back on any error. */
async function inTransaction<T>(
  pool: pg.Pool,
  { prepare, unguarded }: { prepare: boolean; unguarded: boolean },
  waits: Waits,
  fn: (tx: Queryable) => Promise<T>,
): Promise<T> {
  let client: pg.PoolClient;
  const asked = performance.now();
  try {
    client = await pool.connect();
    waits.acquired++;
    waits.waitSeconds += (performance.now() - asked) / 1000;
  } catch (err) {
    throw translate(err);
  }
  let broken = false;
  // A checked-out client whose connection dies (the server restarted) emits 'error':
  // without a listener that would crash the process. The query in flight fails anyway.
  const onError = () => {
    broken = true;
  };
  client.on('error', onError);
  // The client pipelines (see the pool's options): `begin` is not awaited, and the
  // statements `fn` sends before the event loop's next turn go out with it in one write.
  holdWrites(client);
  const begun = client.query(beginStatement()).then(
    () => null,
    (err: unknown) => err,
  );
  const ending: Ending = { begun, commit: null, unguarded };
  try {
    const result = await fn(queryable(client, prepare, ending));
    const failed = (await begun) ?? (await ending.commit);
    if (failed) throw failed; // handled below (a failed `begin` destroys the connection)
    if (!ending.commit) await client.query('commit');
    return result;
  } catch (err) {
    // A failed `begin` is the cause of whatever failed after it. What was sent behind it ran
    // outside a transaction: whatever it left on the session goes with the connection.
    const failed = await begun;
    if (failed) broken = true;
    try {
      // A commit sent behind the last statement ended the transaction (as a rollback if the statement failed).
      if (ending.commit) {
        if (await ending.commit) broken = true;
      } else await client.query('rollback');
    } catch {
      broken = true;
    }
    throw translate(failed ?? err);
  } finally {
    // A client whose rollback failed is in an unknown state: destroy it.
    client.off('error', onError);
    client.release(broken);
  }
}

/**
 * A pool on a server Postgres (any Postgres >= 14, also behind PgBouncer in transaction mode).
 * `prepare`: run each Statement as a named prepared statement (off by default: PgBouncer in
 * transaction mode loses them between transactions; on for the embedded server).
 * `searchPath`: set on every connection as it opens (PINNED_SEARCH_PATH by default); null
 * keeps the role's own (the owner role's pool, where the app's SQL runs). `authenticator`: the
 * login can do nothing (src/db/owner.ts), so a transaction's statements are written with its
 * `begin`; its login is checked at start on a connection of its own, none kept open idle.
 * `keepIdle`: connections kept open when idle, the others closed after BURST_IDLE_MS (pool-idle.ts).
 */
export async function openPostgres(
  url: string,
  opts: { max?: number; prepare?: boolean; searchPath?: string | null; authenticator?: boolean } & {
    keepIdle?: number;
  } = {},
): Promise<Db> {
  const searchPath = opts.searchPath === undefined ? PINNED_SEARCH_PATH : opts.searchPath;
  // A server that is down answers a connect with ECONNREFUSED at once; one that does not
  // answer at all (a dead host, a full backlog) must not hold a request longer than this.
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    ...(opts.keepIdle === undefined ? {} : { min: opts.keepIdle, idleTimeoutMillis: BURST_IDLE_MS }),
    application_name: 'plinth',
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
    Client: searchPath ? pinnedClient(searchPath) : pg.Client,
    // A query is written when asked, not when the one before it was answered: a transaction's
    // `begin` and the caller's setup reach the server in one write (see inTransaction). Code
    // that awaits each query behaves as before; a failed statement in a transaction makes the
    // ones behind it fail (25P02) until the rollback.
    pipeline: true,
  });
  // An idle client losing its connection must not crash the process; nor may a checked-out
  // one between two queries (Postgres stopped): its next query fails, and the pool drops it.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  const wrap = (q: pg.Pool | pg.PoolClient) => queryable(q, opts.prepare === true);
  const root = wrap(pool);
  const listener = new PgListener(url);
  const waits: Waits = { acquired: 0, waitSeconds: 0 };
  // Fail fast at start when the server is unreachable (or the login refused).
  if (opts.authenticator) await checkLogin(url);
  else await root.query('select 1');
  const db: Db = {
    kind: 'postgres',
    connection: { url, prepare: opts.prepare === true },
    query: root.query,
    transaction: (fn) =>
      inTransaction(pool, { prepare: opts.prepare === true, unguarded: opts.authenticator === true }, waits, fn),
    exec: root.exec,
    listen: (channel, onPayload, onState) => listener.listen(channel, onPayload, onState),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, ...waits }),
    close: async () => {
      await listener.close();
      if (!pool.ended) await pool.end();
    },
  };
  return { ...db, ...readOnlyAware(db) };
}
