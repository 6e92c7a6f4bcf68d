import { AppError } from '../errors/index.js';
import type { Queryable } from '../db/types.js';
import { isIdent, quoteIdent, safe } from './ident.js';
import { toParam, valueKind } from './types.js';

interface FunctionRow {
  args: Array<{ name: string | null; typname: string; castType: string; mode: string }> | string;
  nargs: number;
  ndefaults: number;
  retset: boolean;
  rettype: string;
}

// The overloads of public.<name> with their input arguments, in one query.
const LOOKUP_SQL = `
select p.pronargs as nargs, p.pronargdefaults as ndefaults, p.proretset as retset, p.prorettype::regtype::text as rettype,
  coalesce((select json_agg(json_build_object(
      'name', p.proargnames[i], 'typname', t.typname, 'castType', format_type(t.oid, null),
      'mode', coalesce(p.proargmodes[i], 'i')) order by i)
    from generate_series(1, coalesce(array_length(p.proallargtypes, 1), p.pronargs)) i
    join pg_type t on t.oid = coalesce(p.proallargtypes[i], p.proargtypes[i - 1])), '[]') as args
from pg_proc p join pg_namespace n on n.oid = p.pronamespace
where n.nspname = 'public' and p.proname = $1 and p.prokind = 'f'`;

/**
 * Calls public.<name> with named arguments as the caller (tx already runs as them).
 * A set-returning function gives a JSON array, a scalar one its value; JSON text either way.
 */
export async function callFunction(tx: Queryable, name: string, args: Record<string, unknown>, source: 'query' | 'body' = 'body'): Promise<string> {
  if (!isIdent(name)) throw new AppError('RPC_NOT_FOUND', { message: `No function "${safe(name)}".` });
  const { rows } = await tx.query<FunctionRow>(LOOKUP_SQL, [name]);
  if (!rows.length) throw new AppError('RPC_NOT_FOUND', { message: `No function "${name}" in schema public.` });
  const given = Object.keys(args);
  const fn = rows.find((r) => {
    const inputs = inputArgs(r);
    const required = inputs.slice(0, inputs.length - r.ndefaults);
    return given.every((g) => inputs.some((a) => a.name === g)) && required.every((a) => a.name && given.includes(a.name));
  });
  if (!fn) {
    const inputs = inputArgs(rows[0]!).map((a) => a.name ?? '?');
    throw new AppError('INVALID_INPUT', {
      message: `The arguments do not match function "${name}" (it takes: ${inputs.join(', ') || 'no arguments'}).`,
    });
  }
  const values: unknown[] = [];
  const named = inputArgs(fn)
    .filter((a) => a.name && Object.hasOwn(args, a.name))
    .map((a) => {
      values.push(toParam({ name: a.name!, kind: valueKind(a.typname), castType: a.castType }, args[a.name!], source));
      return `${quoteIdent(a.name!)} => $${values.length}::${a.castType}`;
    });
  const call = `public.${quoteIdent(name)}(${named.join(', ')})`;
  const sql = fn.retset
    ? `select coalesce(json_agg(r.*), '[]')::text as body from ${call} r`
    : fn.rettype === 'void'
      ? `select 'null'::text as body from ${call} r`
      : `select coalesce(to_json(${call})::text, 'null') as body`;
  const r = await tx.query<{ body: string }>(sql, values);
  return r.rows[0]?.body ?? 'null';
}

function inputArgs(r: FunctionRow): Array<{ name: string | null; typname: string; castType: string }> {
  const all = typeof r.args === 'string' ? JSON.parse(r.args) : r.args;
  return (all as Array<{ name: string | null; typname: string; castType: string; mode: string }>).filter(
    (a) => a.mode === 'i' || a.mode === 'b' || a.mode === 'v',
  );
}
