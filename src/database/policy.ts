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

/** A policy as the refusal names it: name, kind, roles and its expressions. */
const describe = (p: { name: string; permissive: string; roles: string; using: string | null; check: string | null }) =>
  `"${p.name}" (${p.permissive.toLowerCase()}, to ${p.roles}${p.using ? `, using ${p.using}` : ''}${p.check ? `, with check ${p.check}` : ''})`;

/**
 * Explains an RLS refusal of a write by the table's policies: no policy for the command at
 * all, or a policy whose WITH CHECK (or USING) the row does not pass. Reads pg_policies as
 * the server (the caller may not see the catalog rows).
 */
export async function explainRlsRefusal(
  db: Queryable,
  table: string,
  op: keyof typeof COMMAND,
  err: unknown,
): Promise<AppError> {
  const cmd = COMMAND[op];
  // The policies that apply to the command: Postgres names none when no permissive one passed.
  const { rows } = await db.query<{
    name: string;
    permissive: string;
    roles: string;
    using: string | null;
    check: string | null;
  }>(
    `select policyname as name, permissive, array_to_string(roles, ', ') as roles, qual as using, with_check as check
       from pg_policies where schemaname = 'public' and tablename = $1 and cmd in ($2, 'ALL') order by policyname`,
    [table, cmd],
  );
  const example =
    op === 'insert'
      ? `create policy own_insert on public.${table} for insert to authenticated with check (owner = (select auth.uid()))`
      : `create policy own_${op} on public.${table} for ${op} to authenticated using (owner = (select auth.uid()))`;
  if (rows.length === 0) {
    return new AppError('FORBIDDEN', {
      message: `Table "${table}" has row-level security on and no policy for ${cmd}, so every ${op} by a user or the anon key is refused.`,
      nextActions: `An admin can add a policy for ${cmd} with POST /api/database/sql, e.g. "${example}".`,
      hint: `The table has RLS on and no policy for this command (${cmd}).`,
      cause: err,
      pgrstCode: '42501',
    });
  }
  const clause =
    op === 'insert' ? 'WITH CHECK' : op === 'update' ? 'USING (the row before) or WITH CHECK (the row after)' : 'USING';
  return new AppError('FORBIDDEN', {
    message: `The row does not pass the row-level security policies of table "${table}" for ${cmd} (their ${clause} expression): ${rows.map(describe).join('; ')}.`,
    nextActions: `Send values the policy accepts (often: the owner column equal to your user id), or have an admin change the policy; its expressions are in pg_policies (tablename = '${table}').`,
    hint: `Check the ${clause} expression of the ${cmd} policies of "${table}".`,
    cause: err,
    pgrstCode: '42501',
  });
}
