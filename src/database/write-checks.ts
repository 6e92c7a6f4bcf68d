import { AppError } from '../errors/index.js';

/** PostgREST's `max-affected` under `handling=strict`: thrown inside the transaction, so nothing is changed. */
export function checkMaxAffected(max: number | null | undefined, count: number): void {
  if (max !== null && max !== undefined && count > max) {
    throw new AppError('TOO_MANY_AFFECTED', { details: `The query affects ${count} rows`, pgrstCode: 'PGRST124' });
  }
}

/**
 * Whether a write's `commit` may go behind its statement, in the same round trip: only when
 * nothing checked after the statement could roll it back (`.single()`, `tx=rollback`,
 * max-affected). A statement that fails turns that commit into a rollback (Postgres ends an
 * aborted transaction so), and the write answers only once the commit was answered.
 */
export function commitsBehind(
  op: 'insert' | 'update' | 'delete',
  opts: { single?: boolean; rollback?: boolean; maxAffected?: number | null },
): boolean {
  return !opts.single && !opts.rollback && (op === 'insert' || opts.maxAffected == null);
}
