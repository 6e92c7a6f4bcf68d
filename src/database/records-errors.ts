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
