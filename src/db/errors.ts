import { AppError, type ErrorCode } from '../errors/index.js';

/** The fields of a Postgres error that are safe to show: identifiers, never values. */
export interface PgErrorInfo {
  code: string;
  table?: string;
  column?: string;
  constraint?: string;
}

// SQLSTATE → catalogue code. Classes are matched by their first two characters.
const BY_CODE: Record<string, ErrorCode> = {
  '23505': 'ALREADY_EXISTS',
  '23503': 'INVALID_INPUT',
  '23502': 'INVALID_INPUT',
  '23514': 'INVALID_INPUT',
  '23P01': 'CONFLICT',
  '42501': 'FORBIDDEN',
  '57014': 'QUERY_TIMEOUT',
  '40001': 'SERIALIZATION_FAILURE',
  '40P01': 'SERIALIZATION_FAILURE',
  '57P01': 'DATABASE_UNAVAILABLE',
  '57P02': 'DATABASE_UNAVAILABLE',
  '57P03': 'DATABASE_UNAVAILABLE',
  '53300': 'DATABASE_UNAVAILABLE',
  '53100': 'INSUFFICIENT_STORAGE', // disk full: could not extend a file
  // Connection exceptions (class 08), but for 08P01: a protocol violation is the answer of a
  // live server to a message it refused (a NUL in the query, too few bind parameters).
  '08000': 'DATABASE_UNAVAILABLE',
  '08001': 'DATABASE_UNAVAILABLE',
  '08003': 'DATABASE_UNAVAILABLE',
  '08004': 'DATABASE_UNAVAILABLE',
  '08006': 'DATABASE_UNAVAILABLE',
  '08007': 'DATABASE_UNAVAILABLE',
};
const BY_CLASS: Record<string, ErrorCode> = {
  '22': 'INVALID_INPUT', // data exception: bad value for the type, out of range, ...
};
// ENOENT: the Unix socket of a local server is gone (the embedded Postgres is restarting).
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', 'ENOENT']);
// node-postgres reports a connection lost mid-query (the server process died) with no code at
// all: these are its own fixed messages, the one place a message decides.
const CONNECTION_LOST = /^(Connection terminated|Client has encountered a connection error|Client was closed)/;

// Next actions that differ from the catalogue's for the code (written for storage's uploads).
const NEXT_ACTIONS: Record<string, string> = {
  '53100': 'Try again later; reads go on. The operator must free or add disk space where the database keeps its files (DATA_DIR/postgres, or the disk of the Postgres server at DATABASE_URL); GET /api/health?checks=true shows the free space.',
};

function messageFor(code: ErrorCode, info: PgErrorInfo): string | undefined {
  const where = [info.column && `column "${info.column}"`, info.constraint && `constraint "${info.constraint}"`]
    .filter(Boolean)
    .join(', ');
  switch (info.code) {
    case '23505':
      return `A row with the same unique value already exists${where ? ` (${where})` : ''}.`;
    case '23503':
      return `The value refers to a row that does not exist, or the row is still referenced${where ? ` (${where})` : ''}.`;
    case '23502':
      return `A required value is missing${where ? ` (${where})` : ''}.`;
    case '23514':
      return `A value breaks a check${where ? ` (${where})` : ''}.`;
    case '42501':
      return 'Permission denied by the database (row-level security or privileges).';
    case '53100':
      return 'The database has no disk space left: nothing was written.';
  }
  if (code === 'INVALID_INPUT') return 'A value is not valid for its column type.';
  return undefined;
}

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
    const code = BY_CODE[info.code] ?? BY_CLASS[info.code.slice(0, 2)];
    if (!code) return err;
    return new AppError(code, { message: messageFor(code, info), nextActions: NEXT_ACTIONS[info.code], cause: err });
  }
  if (err instanceof Error && sysCode === undefined && CONNECTION_LOST.test(err.message)) {
    return new AppError('DATABASE_UNAVAILABLE', { cause: err });
  }
  return err;
}
