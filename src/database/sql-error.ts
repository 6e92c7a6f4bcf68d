import { AppError } from '../errors/index.js';
import { pgErrorInfo, translatePgError } from '../db/errors.js';
import { safe } from './ident.js';
import { sqlPosition } from './sql-position.js';

/**
 * The answer to a failed statement the admin wrote (admin SQL, a migration): 403
 * SQL_NOT_PERMITTED when the owner role lacks the privilege (42501: superuser-only commands,
 * Plinth's own schemas), 507 when the disk is full, else 400 SQL_ERROR with the database's own message and where in the
 * text it failed; other errors (an outage, a timeout) pass as they are.
 */
export function adminSqlError(err: unknown, query: string): unknown {
  const cause = err instanceof AppError ? err.cause : err;
  const info = pgErrorInfo(cause);
  if (info?.code === '42501') {
    return new AppError('SQL_NOT_PERMITTED', {
      message: `SQLSTATE 42501: ${safe(cause instanceof Error ? cause.message : String(cause), 500)}`,
      cause: err,
    });
  }
  if (err instanceof AppError || !info) return err;
  // A full disk is the server's state, not a mistake in the SQL: 507 as everywhere.
  if (info.code === '53100') return translatePgError(err);
  // The admin wrote this SQL: the database's own message is what they need to fix it.
  const text = err instanceof Error ? err.message : String(err);
  const position = sqlPosition(query, (err as { position?: unknown }).position);
  const where = position ? ` (line ${position.line}, column ${position.column})` : '';
  return new AppError('SQL_ERROR', {
    message: `SQLSTATE ${info.code}: ${safe(text, 500)}${where}`,
    cause: err,
    ...(position ? { position } : {}),
  });
}
