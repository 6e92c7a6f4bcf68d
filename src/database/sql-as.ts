import { AppError } from '../errors/index.js';
import type { Db } from '../db/types.js';
import { withCaller } from './caller.js';
import { sqlError } from './tables.js';

/** Who a query runs as: a user (by id and email) or the anon key. */
export type ActAs = { userId: string; email: string } | null;

/** Carries the result out of the transaction that is then rolled back. */
class Rollback {
  constructor(readonly result: { rows?: unknown[]; rowCount?: number | null }) {}
}

/**
 * Runs one statement as a user or anon would (their role, their claims, so every policy
 * applies) through withCaller, the path the records API takes, and always rolls back: the
 * admin sees what that caller would see, and nothing they try is kept.
 */
export async function runAs(db: Db, query: string, who: ActAs): Promise<{ rows: unknown[]; rowCount: number; role: 'authenticated' | 'anon'; rolledBack: true }> {
  const identity = who
    ? { kind: 'user' as const, userId: who.userId, email: who.email, sessionId: '', claims: { sub: who.userId, email: who.email } as never, sessionChecked: true }
    : { kind: 'anon' as const };
  try {
    await withCaller(db, identity, async (tx) => {
      throw new Rollback(await tx.query(query));
    });
    throw new Error('unreachable: the statement ends in a rollback');
  } catch (err) {
    // A denial is what this caller would meet: the database's own message, as admin SQL errors say it.
    if (!(err instanceof Rollback)) throw sqlError(query, err instanceof AppError && err.cause ? err.cause : err);
    const rows = err.result.rows ?? [];
    return { rows, rowCount: Math.max(err.result.rowCount ?? 0, rows.length), role: who ? 'authenticated' : 'anon', rolledBack: true };
  }
}
