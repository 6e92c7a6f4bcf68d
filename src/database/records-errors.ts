// Database errors of the records API (reads, writes, RPC) refined by SQLSTATE into the
// catalogue's codes (db/sqlstate.ts), after db/errors.ts has translated the generic ones.
import { pgErrorInfo, refinePgError } from '../db/errors.js';
import { AppError } from '../errors/index.js';
import { safe } from './ident.js';
import { raisedError } from './raised.js';

export type Operation = 'select' | 'insert' | 'update' | 'delete' | 'rpc';

/** No such table in the exposed schema: 404 PGRST205 with PostgREST's message. */
export function tableNotFound(schema: string, name: string): AppError {
  return new AppError('TABLE_NOT_FOUND', {
    message: `Could not find the table '${schema}.${safe(name)}' in the schema cache`,
  });
}

/**
 * Refines the database errors of a records operation by SQLSTATE (the table of db/sqlstate.ts);
 * `schemaChanged` forgets the cached schema when the error says it changed under this instance.
 */
export function translate(err: unknown, op: Operation, schemaChanged: () => void): unknown {
  // RAISE in a function or trigger: its message was written for the client.
  const info = err instanceof AppError ? null : pgErrorInfo(err);
  return (
    (info && raisedError(err, info.code)) ?? refinePgError(err, op === 'delete' ? 'delete' : 'records', schemaChanged)
  );
}

/**
 * A constraint violation (SQLSTATE class 23) as PostgREST answers it on /api/db: Postgres's own
 * message, DETAIL and HINT (`duplicate key value violates unique constraint "x"`, `Key (id)=(1)
 * already exists.`), beside our envelope; a missing referenced row is 409 there, as a duplicate.
 * Postgres leaves the values out of DETAIL when the caller may not read them (RLS on the table,
 * no SELECT on the columns), so this shows no more than the caller can see. Null: not one.
 */
export function constraintAnswer(err: AppError): AppError | null {
  let found = err.cause;
  while (found instanceof AppError) found = found.cause; // a refined answer keeps the first as its cause
  const cause = found as { message?: unknown; detail?: unknown; hint?: unknown } | undefined;
  const info = pgErrorInfo(cause);
  if (!info?.code.startsWith('23') || typeof cause?.message !== 'string') return null;
  const text = (v: unknown) => (typeof v === 'string' ? v.replace(/[\x00-\x1f\x7f]/g, ' ').slice(0, 1000) : undefined);
  const reference = info.code === '23503' && err.code === 'INVALID_INPUT';
  return new AppError(reference ? 'CONFLICT' : err.code, {
    message: text(cause.message),
    details: text(cause.detail),
    hint: text(cause.hint),
    nextActions: reference
      ? 'Refer to a row that exists (insert it first), or change the rows that still refer to this one.'
      : err.nextActions,
    cause,
  });
}
