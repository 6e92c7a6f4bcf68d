import type { Queryable } from '../db/types.js';

/** One row-level security policy of a table, as pg_policies shows it. */
export interface Policy {
  name: string;
  command: string;
  permissive: boolean;
  roles: string[];
  using: string | null;
  withCheck: string | null;
}

/** The RLS policies of table `public.<table>` (the caller checked the table exists), by name. */
export async function listPolicies(db: Queryable, table: string): Promise<Policy[]> {
  const { rows } = await db.query<{
    name: string;
    command: string;
    permissive: string;
    roles: unknown;
    using: string | null;
    check: string | null;
  }>(
    `select policyname as name, cmd as command, permissive, roles::text[] as roles, qual as using, with_check as check
       from pg_policies where schemaname = 'public' and tablename = $1 order by policyname`,
    [table],
  );
  return rows.map((r) => ({
    name: r.name,
    command: r.command,
    permissive: r.permissive === 'PERMISSIVE',
    roles: parseRoles(r.roles),
    using: r.using,
    withCheck: r.check,
  }));
}

/** pg returns text[] as an array; PGlite may give the array literal. */
function parseRoles(v: unknown): string[] {
  if (Array.isArray(v)) return v.map(String);
  const s = String(v ?? '');
  return s
    .replace(/^\{|\}$/g, '')
    .split(',')
    .filter(Boolean)
    .map((x) => x.replace(/^"|"$/g, ''));
}

/**
 * Why `role` (anon or authenticated) was refused a `command` on `public.<table>` with 42501 and
 * no row-level security message: the privilege it lacks (src/database/policy.ts explains RLS
 * refusals by their policies). Null when the role has the privilege.
 */
export async function explainRefusal(
  db: Queryable,
  table: string,
  command: 'insert' | 'update' | 'delete' | 'select',
  role: 'anon' | 'authenticated',
): Promise<string | null> {
  const { rows } = await db.query<{ granted: boolean }>(
    `select has_table_privilege($2, c.oid, $3) as granted from pg_class c
      where c.relnamespace = 'public'::regnamespace and c.relname = $1`,
    [table, role, command],
  );
  if (!rows[0] || rows[0].granted) return null;
  return `The role ${role} has no ${command} privilege on table "${table}" (checked before any policy): grant ${command} on public."${table}" to ${role}.`;
}
