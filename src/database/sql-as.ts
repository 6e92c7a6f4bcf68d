import { AppError } from '../errors/index.js';
import { pgErrorInfo, translatePgError } from '../db/errors.js';
import type { Db } from '../db/types.js';
import { withCaller } from './caller.js';
import { safe } from './ident.js';
import { sqlPosition } from './sql-position.js';

/** Who a query runs as: a user (by id and email) or the anon key. */
export type ActAs = { userId: string; email: string } | null;

/**
 * A failed statement as the admin who wrote it needs it: the database's own message and
 * position, as admin SQL answers (SQL_ERROR, 400). A permission denial is one of those: it is
 * what that caller would meet, not a refusal of the admin.
 */
function asError(query: string, err: unknown): unknown {
  const cause = err instanceof AppError && err.cause ? err.cause : err;
  const info = pgErrorInfo(cause);
  if (!info) return err;
  // A full disk is the server's state, not a mistake in the SQL: 507 as everywhere.
  if (info.code === '53100') return translatePgError(cause);
  const position = sqlPosition(query, (cause as { position?: unknown }).position);
  const where = position ? ` (line ${position.line}, column ${position.column})` : '';
  const text = cause instanceof Error ? cause.message : String(cause);
  return new AppError('SQL_ERROR', {
    message: `SQLSTATE ${info.code}: ${safe(text, 500)}${where}`,
    cause,
    ...(position ? { position } : {}),
  });
}

/** Carries the result out of the transaction that is then rolled back. */
class Rollback {
  constructor(readonly result: { rows?: unknown[]; rowCount?: number | null }) {}
}

/**
 * Runs one statement as a user or anon would (their role, their claims, so every policy
 * applies) through withCaller, the path the records API takes, and always rolls back: the
 * admin sees what that caller would see, and nothing they try is kept.
 */
export async function runAs(
  db: Db,
  query: string,
  who: ActAs,
): Promise<{ rows: unknown[]; rowCount: number; role: 'authenticated' | 'anon'; rolledBack: true }> {
  const identity = who
    ? {
        kind: 'user' as const,
        userId: who.userId,
        email: who.email,
        sessionId: '',
        claims: { sub: who.userId, email: who.email } as never,
        sessionChecked: true,
      }
    : { kind: 'anon' as const };
  try {
    await withCaller(
      db,
      identity,
      async (tx) => {
        throw new Rollback(await tx.query(query, [], { temporalText: true }));
      },
      { adminSql: true },
    );
    throw new Error('unreachable: the statement ends in a rollback');
  } catch (err) {
    if (!(err instanceof Rollback)) throw asError(query, err);
    const rows = err.result.rows ?? [];
    return {
      rows,
      rowCount: Math.max(err.result.rowCount ?? 0, rows.length),
      role: who ? 'authenticated' : 'anon',
      rolledBack: true,
    };
  }
}
