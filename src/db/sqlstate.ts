// The one table from Postgres's SQLSTATE to the catalogue's error code and message (STYLE.md 4),
// by where the statement came from: every query (`query`), a records request (`records`, and
// `delete` on top of it) or a schema change of /api/database/tables (`ddl`). A key of two
// characters is a whole class. The status comes from the catalogue, as for every AppError.
import type { ErrorCode } from '../errors/index.js';

/** The fields of a Postgres error that are safe to show: identifiers, never values. */
export interface PgErrorInfo {
  code: string;
  table?: string;
  column?: string;
  constraint?: string;
}

export type PgContext = 'query' | 'records' | 'delete' | 'ddl';

export interface PgMapping {
  code: ErrorCode;
  /** The message; none: the catalogue's. */
  message?: string | ((info: PgErrorInfo) => string);
  nextActions?: string;
  /** Applies also when `query` has already translated the error (it refines that answer). */
  refines?: true;
  /** The table or column the request named is gone: the schema cache must be forgotten. */
  schemaChanged?: true;
}

/** ` (column "c", constraint "k")`, the identifiers the error names; never a value. */
const where = (i: PgErrorInfo) => {
  const w = [i.column && `column "${i.column}"`, i.constraint && `constraint "${i.constraint}"`].filter(Boolean);
  return w.length ? ` (${w.join(', ')})` : '';
};
const unavailable: PgMapping = { code: 'DATABASE_UNAVAILABLE' };
const stillReferenced: PgMapping = {
  code: 'STILL_REFERENCED',
  message: (i) => `The row is still referenced${i.constraint ? ` (constraint "${i.constraint}")` : ''}.`,
  refines: true,
};

export const SQLSTATES: Record<PgContext, Record<string, PgMapping>> = {
  query: {
    '23505': { code: 'ALREADY_EXISTS', message: (i) => `A row with the same unique value already exists${where(i)}.` },
    '23503': {
      code: 'INVALID_INPUT',
      message: (i) => `The value refers to a row that does not exist, or the row is still referenced${where(i)}.`,
    },
    '23502': { code: 'INVALID_INPUT', message: (i) => `A required value is missing${where(i)}.` },
    '23514': { code: 'INVALID_INPUT', message: (i) => `A value breaks a check${where(i)}.` },
    '23P01': { code: 'CONFLICT' },
    '42501': { code: 'FORBIDDEN', message: 'Permission denied by the database (row-level security or privileges).' },
    '57014': { code: 'QUERY_TIMEOUT' },
    '25006': { code: 'READ_ONLY' }, // a write in a READ ONLY transaction (a read-only MCP session)
    '40001': { code: 'SERIALIZATION_FAILURE' },
    '40P01': { code: 'SERIALIZATION_FAILURE' },
    '57P01': unavailable,
    '57P02': unavailable,
    '57P03': unavailable,
    '53300': unavailable,
    // Disk full: could not extend a file.
    '53100': {
      code: 'INSUFFICIENT_STORAGE',
      message: 'The database has no disk space left: nothing was written.',
      nextActions:
        'Try again later; reads go on. The operator must free or add disk space where the database keeps its files (DATA_DIR/postgres, or the disk of the Postgres server at DATABASE_URL); GET /api/health?checks=true shows the free space.',
    },
    // Connection exceptions (class 08), but for 08P01: a protocol violation is the answer of a
    // live server to a message it refused (a NUL in the query, too few bind parameters).
    '08000': unavailable,
    '08001': unavailable,
    '08003': unavailable,
    '08004': unavailable,
    '08006': unavailable,
    '08007': unavailable,
    // Data exception: a bad value for the type, out of range, ...
    '22': { code: 'INVALID_INPUT', message: 'A value is not valid for its column type.' },
  },
  records: {
    '23001': stillReferenced, // an ON DELETE RESTRICT reference
    // The schema changed under this instance: forgotten, so the next request sees the new one.
    '42P01': { code: 'TABLE_NOT_FOUND', schemaChanged: true },
    '42703': { code: 'UNKNOWN_COLUMN', message: 'A column of the request does not exist.', schemaChanged: true },
    '54001': { code: 'INVALID_QUERY', message: 'The query is too complex.' },
    // 0A000/55000: e.g. writing to a view that cannot be written to.
    '0A': { code: 'INVALID_QUERY', message: 'This table or view does not allow this operation.' },
    '55': { code: 'INVALID_QUERY', message: 'This table or view does not allow this operation.' },
    // Other class-42 errors of a records statement come from what the request asked for
    // (an operator that does not fit a type, an ambiguous function call, ...).
    '42': {
      code: 'INVALID_QUERY',
      message: 'The request does not fit the table or function (types, operators or arguments).',
    },
  },
  delete: { '23503': stillReferenced }, // a NO ACTION reference
  ddl: {
    '42P07': { code: 'TABLE_EXISTS' },
    '42701': { code: 'ALREADY_EXISTS', message: 'A column or constraint with this name already exists.' },
    '42710': { code: 'ALREADY_EXISTS', message: 'A column or constraint with this name already exists.' },
    '42P01': { code: 'INVALID_INPUT', message: 'A referenced table does not exist.' },
    '42703': { code: 'UNKNOWN_COLUMN', message: 'A referenced column does not exist.' },
    '2BP01': {
      code: 'CONFLICT',
      message: 'Other objects depend on this table or column (for example a foreign key or a policy).',
      nextActions: 'Drop the foreign keys or policies that depend on it first.',
    },
    '42': {
      code: 'INVALID_INPUT',
      message:
        'The schema change is not valid (for example a foreign key between columns of different types, or to a column that is not unique).',
    },
  },
};

// A records delete refines the records mapping, which refines nothing of `query`'s but what it marks.
const CHAIN: Record<PgContext, PgContext[]> = {
  query: ['query'],
  records: ['records'],
  delete: ['delete', 'records'],
  ddl: ['ddl'],
};

/** The mapping of a SQLSTATE in a context: its own entry, else its class's, along the context's chain. */
export function pgMapping(state: string, context: PgContext): PgMapping | undefined {
  for (const c of CHAIN[context]) {
    const m = SQLSTATES[c][state] ?? SQLSTATES[c][state.slice(0, 2)];
    if (m) return m;
  }
  return undefined;
}
