import { createHash } from 'node:crypto';

/**
 * A statement of fixed text that the code runs often (a hot path): where the engine allows
 * it (the embedded server: no PgBouncer in between), prepared once per connection, so
 * Postgres parses and plans it once instead of on every request. Only for text written in
 * the code, never for SQL built from a request (each prepared text stays in its connection).
 */
export interface Statement {
  readonly text: string;
  readonly name: string;
  /**
   * A shape: SQL built from a request whose text is a function of the request's shape (every
   * value a parameter). Prepared where the engine allows, in a bounded per-connection cache
   * (the least recently used shape is deallocated), since shapes are not a fixed set.
   */
  readonly shape?: true;
}

export function statement(text: string): Statement {
  return { text, name: `plinth_${createHash('sha256').update(text).digest('hex').slice(0, 24)}` };
}

/** The shape of a request's statement (see `Statement.shape`): named by its text like `statement()`. */
export function shaped(text: string): Statement {
  return { text, name: `plinth_s_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`, shape: true };
}

/** Prepared shapes kept per connection before the least recently used is deallocated. */
export const SHAPES_PER_CONNECTION = 100;

/** Something that runs parameterised SQL: the database itself or an open transaction. */
export interface Queryable {
  /** One statement; every value goes in `params` as a bind parameter ($1, $2, ...). */
  query<T = Record<string, unknown>>(
    sql: string | Statement,
    params?: readonly unknown[],
    opts?: QueryOptions,
  ): Promise<QueryResult<T>>;
  /** Runs a script of several statements without parameters (migrations only). */
  exec(sql: string): Promise<void>;
}

export interface QueryOptions {
  /**
   * Date and time values as Postgres's own text instead of a JavaScript Date (src/db/type-parsers.ts):
   * for SQL an admin or agent wrote, whose answer is shown as it is.
   */
  temporalText?: boolean;
  /**
   * The transaction's last statement, a read: on a server its commit is sent right behind it,
   * in the same round trip (a failed statement turns that commit into a rollback). No
   * statement may follow it in the transaction.
   */
  last?: boolean;
  /**
   * In a transaction on a server, may be written before the transaction's `begin` is answered
   * (in the same round trip). Only for a statement that grants nothing and changes nothing if
   * that `begin` failed and it ran on its own: the caller's `set_config(…, true)` setup, whose
   * settings would then end with it. Every other statement waits for the `begin`'s answer.
   */
  beforeBegin?: boolean;
}

export interface QueryResult<T> {
  rows: T[];
  rowCount: number;
  /** The result's columns (name and type OID), where the engine reports them. */
  fields?: Array<{ name: string; dataTypeID: number }>;
}

/** One interface over a Postgres pool (the embedded server or DATABASE_URL) and PGlite (pglite://). */
export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** How a server pool was opened (the owner role's pool is opened the same way, src/db/owner.ts). */
  readonly connection?: { url: string; prepare: boolean };
  /** Runs `fn` in one transaction: committed if it resolves, rolled back if it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Calls `onPayload` with the payload of every NOTIFY on `channel` (a lower-case identifier)
   * until the returned function is called. Server Postgres: one dedicated connection per Db,
   * reconnected when it drops (notifications sent while it is down are lost): `onState` hears
   * false when it drops and true once it listens again. PGlite never drops.
   */
  listen(
    channel: string,
    onPayload: (payload: string) => void,
    onState?: (listening: boolean) => void,
  ): Promise<() => Promise<void>>;
  close(): Promise<void>;
  /** The connection pool's state, for metrics (absent on PGlite: one in-process connection). */
  poolStats?(): PoolStats;
  /**
   * On the owner role's pool, when Plinth may log in separately (src/db/owner.ts): the pool
   * logged in as the authenticator, where the transactions of users and the anon key run
   * (src/database/caller.ts), each written in one go with its `begin`.
   */
  readonly callers?: Db;
}

export interface PoolStats {
  total: number;
  idle: number;
  /** Callers waiting for a connection now. */
  waiting: number;
  /** Connections handed to transactions so far, and the seconds they waited in all. */
  acquired: number;
  waitSeconds: number;
}
