import { AppError } from '../errors/index.js';
import type { Queryable } from '../db/types.js';
import { pgErrorInfo } from '../db/errors.js';

/** The command a policy must allow for each write. */
const COMMAND = { insert: 'INSERT', update: 'UPDATE', delete: 'DELETE' } as const;

/** Whether `err` (or its cause) is Postgres refusing a row by row-level security (42501 "new row violates row-level security"). */
export function isRlsRefusal(err: unknown): boolean {
  const raw = err instanceof AppError ? err.cause : err;
  const info = pgErrorInfo(raw);
  // 42501 also means a missing privilege; only the RLS check names row-level security.
  return info?.code === '42501' && raw instanceof Error && /row-level security/i.test(raw.message);
}

/**
 * Explains an RLS refusal of a write by the table's policies: no policy for the command at
 * all, or a policy whose WITH CHECK (or USING) the row does not pass. Reads pg_policies as
 * the server (the caller may not see the catalog rows).
 */
export async function explainRlsRefusal(db: Queryable, table: string, op: keyof typeof COMMAND, err: unknown): Promise<AppError> {
  const cmd = COMMAND[op];
  const { rows } = await db.query<{ n: number | string }>(
    `select count(*) as n from pg_policies where schemaname = 'public' and tablename = $1 and cmd in ($2, 'ALL')`,
    [table, cmd],
  );
  const example =
    op === 'insert'
      ? `create policy own_insert on public.${table} for insert to authenticated with check (owner = auth.uid())`
      : `create policy own_${op} on public.${table} for ${op} to authenticated using (owner = auth.uid())`;
  if (Number(rows[0]?.n ?? 0) === 0) {
    return new AppError('FORBIDDEN', {
      message: `Table "${table}" has row-level security on and no policy for ${cmd}, so every ${op} by a user or the anon key is refused.`,
      nextActions: `An admin can add a policy for ${cmd} with POST /api/database/sql, e.g. "${example}".`,
      hint: `The table has RLS on and no policy for this command (${cmd}).`,
      cause: err,
      pgrstCode: '42501',
    });
  }
  const clause = op === 'insert' ? 'WITH CHECK' : op === 'update' ? 'USING (the row before) or WITH CHECK (the row after)' : 'USING';
  return new AppError('FORBIDDEN', {
    message: `The row does not pass the row-level security policy of table "${table}" for ${cmd} (its ${clause} expression).`,
    nextActions: `Send values the policy accepts (often: the owner column equal to your user id), or have an admin change the policy; its expressions are in pg_policies (tablename = '${table}').`,
    hint: `Check the ${clause} expression of the ${cmd} policies of "${table}".`,
    cause: err,
    pgrstCode: '42501',
  });
}
