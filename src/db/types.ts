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
}

export function statement(text: string): Statement {
  return { text, name: `plinth_${createHash('sha256').update(text).digest('hex').slice(0, 24)}` };
}

/** Something that runs parameterised SQL: the database itself or an open transaction. */
export interface Queryable {
  /** One statement; every value goes in `params` as a bind parameter ($1, $2, ...). */
  query<T = Record<string, unknown>>(sql: string | Statement, params?: readonly unknown[]): Promise<QueryResult<T>>;
  /** Runs a script of several statements without parameters (migrations only). */
  exec(sql: string): Promise<void>;
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
  /** Runs `fn` in one transaction: committed if it resolves, rolled back if it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Calls `onPayload` with the payload of every NOTIFY on `channel` (a lower-case identifier)
   * until the returned function is called. Server Postgres: one dedicated connection per Db,
   * reconnected when it drops (notifications sent while it is down are lost): `onState` hears
   * false when it drops and true once it listens again. PGlite never drops.
   */
  listen(channel: string, onPayload: (payload: string) => void, onState?: (listening: boolean) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}
