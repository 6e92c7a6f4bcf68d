import { AsyncLocalStorage } from 'node:async_hooks';
import type { Db } from './types.js';

// A read-only scope (an MCP session opened with ?readonly=1): every statement any pool runs
// inside it, on Plinth's connection or the owner role's, runs in a READ ONLY transaction, so
// a view or a function of the app that writes is refused by the database itself (25006).
const scope = new AsyncLocalStorage<true>();

/** Runs `fn` with every query of every pool in a READ ONLY transaction. */
export function readOnlyDatabase<T>(fn: () => Promise<T>): Promise<T> {
  return scope.run(true, fn);
}

/** Whether the caller runs in a read-only scope. */
export function isReadOnly(): boolean {
  return scope.getStore() === true;
}

/**
 * Runs `fn` outside any read-only scope: for background work that a call inside one starts and
 * that outlives it (a timer that flushes the log store), which must not inherit the scope.
 */
export function outsideReadOnly<T>(fn: () => T): T {
  return scope.exit(fn);
}

/**
 * The statement that opens a transaction: READ ONLY in a read-only scope. A query outside a
 * transaction runs in one of its own there (`query` and `exec` of a pool go through this).
 */
export function beginStatement(): string {
  return isReadOnly() ? 'begin read only' : 'begin';
}

/** A pool's `query`/`exec` that, in a read-only scope, run in a read-only transaction of their own. */
export function readOnlyAware(db: Pick<Db, 'query' | 'exec' | 'transaction'>): Pick<Db, 'query' | 'exec'> {
  const { query, exec } = db;
  return {
    query: (sql, params, opts) =>
      isReadOnly() ? db.transaction((tx) => tx.query(sql, params, opts)) : query(sql, params, opts),
    exec: (sql) => (isReadOnly() ? db.transaction((tx) => tx.exec(sql)) : exec(sql)),
  } as Pick<Db, 'query' | 'exec'>;
}
