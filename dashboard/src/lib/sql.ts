// SQL the dashboard shows before it runs it (schema edits, RLS, policies): identifiers are
// checked and double-quoted, literals single-quoted, so what is shown is exactly what runs.
import { api } from '../api';

const IDENT = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;

/** A double-quoted identifier; throws on a name Postgres would not take as typed. */
export function ident(name: string): string {
  if (!IDENT.test(name))
    throw new Error(
      `"${name}" is not a valid name: use letters, digits and _ (not first a digit), up to 63 characters.`,
    );
  return `"${name}"`;
}

export const table = (name: string) => `public.${ident(name)}`;
export const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** The Postgres type of an API column type (others pass through as written). */
export const PG_TYPE: Record<string, string> = {
  string: 'text',
  integer: 'bigint',
  float: 'double precision',
  boolean: 'boolean',
  uuid: 'uuid',
  datetime: 'timestamptz',
  date: 'date',
  json: 'jsonb',
};
const PG_TYPE_NAME = /^[a-z_][a-z0-9_]*( [a-z]+)*(\(\d+(,\d+)?\))?(\[\])?$/i;
export function pgType(t: string): string {
  if (PG_TYPE[t]) return PG_TYPE[t]!;
  if (!PG_TYPE_NAME.test(t.trim()))
    throw new Error(
      `"${t}" is not a type name: use one of ${Object.keys(PG_TYPE).join(', ')} or a Postgres type such as numeric(10,2).`,
    );
  return t.trim();
}

/** Runs SQL through the admin SQL endpoint (one transaction). */
export const runSql = <T = Record<string, unknown>>(query: string, params: unknown[] = []) =>
  api<{ rows: T[]; rowCount: number }>('/api/database/sql', {
    method: 'POST',
    body: params.length ? { query, params } : { query },
  });

export const rlsSql = (t: string, on: boolean) =>
  `alter table ${table(t)} ${on ? 'enable' : 'disable'} row level security;`;

export interface PolicyDraft {
  template: string;
  name: string;
  command: string;
  column: string;
}

export const TEMPLATES: Record<string, { label: string; note: string }> = {
  owner: { label: 'Owner only', note: 'signed-in users see and change only the rows whose owner column is their id' },
  public_read: { label: 'Public read', note: 'anyone, with or without a session, can read every row' },
  auth_read: { label: 'Authenticated read', note: 'any signed-in user can read every row' },
  column_owner: {
    label: 'Per-column ownership',
    note: 'users change rows only where the chosen column holds their id; everyone signed in reads',
  },
};

/** The CREATE POLICY statement(s) of a template. */
export function policySql(t: string, p: PolicyDraft): string {
  const name = ident(p.name);
  const on = table(t);
  const col = p.column ? ident(p.column) : '"owner"';
  switch (p.template) {
    case 'public_read':
      return `create policy ${name} on ${on}\n  for select to anon, authenticated\n  using (true);`;
    case 'auth_read':
      return `create policy ${name} on ${on}\n  for select to authenticated\n  using (true);`;
    case 'column_owner':
      return [
        `create policy ${ident(`${p.name}_read`)} on ${on}\n  for select to authenticated\n  using (true);`,
        `create policy ${ident(`${p.name}_write`)} on ${on}\n  for update to authenticated\n  using (${col} = (select auth.uid()))\n  with check (${col} = (select auth.uid()));`,
      ].join('\n');
    default: {
      const cmd = p.command || 'all';
      const using = cmd === 'insert' ? '' : `\n  using (${col} = (select auth.uid()))`;
      const check = cmd === 'select' || cmd === 'delete' ? '' : `\n  with check (${col} = (select auth.uid()))`;
      return `create policy ${name} on ${on}\n  for ${cmd} to authenticated${using}${check};`;
    }
  }
}

export interface ColumnChange {
  op: 'add' | 'rename' | 'type' | 'drop' | 'fk';
  column: string;
  to?: string;
  type?: string;
  nullable?: boolean;
  defaultValue?: string;
  refTable?: string;
  refColumn?: string;
  onDelete?: string;
}

/** The ALTER TABLE statement of one schema change. */
export function alterSql(t: string, c: ColumnChange): string {
  const on = `alter table ${table(t)}`;
  const col = ident(c.column);
  switch (c.op) {
    case 'add':
      return `${on} add column ${col} ${pgType(c.type ?? 'string')}${c.nullable === false ? ' not null' : ''}${c.defaultValue ? ` default ${c.defaultValue}` : ''};`;
    case 'rename':
      return `${on} rename column ${col} to ${ident(c.to ?? '')};`;
    case 'type': {
      const ty = pgType(c.type ?? 'string');
      return `${on} alter column ${col} type ${ty} using ${col}::${ty};`;
    }
    case 'drop':
      return `${on} drop column ${col};`;
    case 'fk':
      return `${on} add constraint ${ident(`${t}_${c.column}_fkey`.slice(0, 63))} foreign key (${col}) references ${table(c.refTable ?? '')} (${ident(c.refColumn || 'id')}) on delete ${c.onDelete ?? 'no action'};`;
  }
}
