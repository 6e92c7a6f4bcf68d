import { AppError } from '../errors/index.js';
import { type PgContext, type PgErrorInfo, type PgMapping, pgMapping } from './sqlstate.js';

export type { PgErrorInfo } from './sqlstate.js';

// ENOENT: the Unix socket of a local server is gone (the embedded Postgres is restarting).
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', 'ENOENT']);
// node-postgres reports a connection lost mid-query (the server process died) with no code at
// all: these are its own fixed messages, the one place a message decides.
const CONNECTION_LOST = /^(Connection terminated|Client has encountered a connection error|Client was closed)/;

/** Reads the SQLSTATE and safe identifiers of a pg/PGlite error, or null for other errors. */
export function pgErrorInfo(err: unknown): PgErrorInfo | null {
  if (!err || typeof err !== 'object') return null;
  const e = err as Record<string, unknown>;
  if (typeof e.code !== 'string' || !/^[0-9A-Z]{5}$/.test(e.code)) return null;
  const pick = (k: string) => (typeof e[k] === 'string' ? (e[k] as string) : undefined);
  return { code: e.code, table: pick('table'), column: pick('column'), constraint: pick('constraint') };
}

/**
 * Translates a driver error into an AppError by SQLSTATE (never by message text). The
 * original error stays as `cause` for the log and for callers that refine the mapping.
 * Errors with no mapping are returned unchanged and end as a 500.
 */
export function translatePgError(err: unknown): unknown {
  if (err instanceof AppError) return err;
  const sysCode = (err as { code?: unknown } | null)?.code;
  // Before the SQLSTATE test: EPIPE has the shape of a SQLSTATE (five capitals).
  if (typeof sysCode === 'string' && NETWORK_CODES.has(sysCode)) {
    return new AppError('DATABASE_UNAVAILABLE', { cause: err });
  }
  const info = pgErrorInfo(err);
  if (info) {
    const m = pgMapping(info.code, 'query');
    return m ? appError(m, info, err) : err;
  }
  if (err instanceof Error && sysCode === undefined && CONNECTION_LOST.test(err.message)) {
    return new AppError('DATABASE_UNAVAILABLE', { cause: err });
  }
  return err;
}

/**
 * Refines an error of a records request or a schema change by its SQLSTATE (the table of
 * sqlstate.ts), after `translatePgError` has answered the generic ones; `schemaChanged` is called
 * when the error says the schema changed under this instance.
 */
export function refinePgError(err: unknown, context: Exclude<PgContext, 'query'>, schemaChanged?: () => void): unknown {
  const info = pgErrorInfo(err instanceof AppError ? err.cause : err);
  const m = info && pgMapping(info.code, context);
  if (!info || !m || (err instanceof AppError && !m.refines)) return err;
  if (m.schemaChanged) schemaChanged?.();
  return appError(m, info, err);
}

function appError(m: PgMapping, info: PgErrorInfo, cause: unknown): AppError {
  const message = typeof m.message === 'function' ? m.message(info) : m.message;
  return new AppError(m.code, { message, nextActions: m.nextActions, cause });
}
