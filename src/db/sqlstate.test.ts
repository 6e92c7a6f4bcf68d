// The one SQLSTATE table: each context's answer, its class fallback, and a records delete
// refining what the pool already translated.
import { describe, expect, it } from 'vitest';
import { AppError } from '../errors/index.js';
import { refinePgError, translatePgError } from './errors.js';

const pgError = (code: string, extra: Record<string, string> = {}) =>
  Object.assign(new Error('pg'), { code, ...extra });
const answer = (e: unknown) => (e instanceof AppError ? [e.code, e.status, e.message] : e);

describe('SQLSTATE → catalogue, one table', () => {
  it('every query: by code, then by class, identifiers in the message; unknown codes pass', () => {
    expect(answer(translatePgError(pgError('23505', { column: 'email' })))).toEqual([
      'ALREADY_EXISTS',
      409,
      'A row with the same unique value already exists (column "email").',
    ]);
    expect(answer(translatePgError(pgError('22P02')))).toEqual([
      'INVALID_INPUT',
      400,
      'A value is not valid for its column type.',
    ]);
    const odd = pgError('XX000');
    expect(translatePgError(odd)).toBe(odd);
  });

  it('a records delete refines the foreign-key answer of the pool; other records operations keep it', () => {
    const translated = translatePgError(pgError('23503', { constraint: 'posts_author_fk' }));
    expect(answer(refinePgError(translated, 'delete'))).toEqual([
      'STILL_REFERENCED',
      409,
      'The row is still referenced (constraint "posts_author_fk").',
    ]);
    expect(refinePgError(translated, 'records')).toBe(translated);
  });

  it('the same SQLSTATE answers by context, and a gone table forgets the schema only in records', () => {
    let forgotten = 0;
    const gone = pgError('42P01');
    expect((refinePgError(gone, 'records', () => forgotten++) as AppError).code).toBe('TABLE_NOT_FOUND');
    expect(forgotten).toBe(1);
    expect((refinePgError(gone, 'ddl', () => forgotten++) as AppError).code).toBe('INVALID_INPUT');
    expect(forgotten).toBe(1);
    expect((refinePgError(pgError('42883'), 'records') as AppError).code).toBe('INVALID_QUERY');
    expect((refinePgError(pgError('42883'), 'ddl') as AppError).code).toBe('INVALID_INPUT');
  });
});
