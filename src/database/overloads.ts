// A function's overloads as PostgREST sees them: read from pg_proc, which of them can be
// called, and the one the given argument names (or the body's type) select.
import { AppError } from '../errors/index.js';
import { statement, type Queryable } from '../db/types.js';
import { closest } from '../lib/fuzzy.js';

/** One parameter of a function: `mode` i(n), o(ut), b(oth), v(ariadic), t(able). */
export interface Arg {
  name: string | null;
  typname: string;
  castType: string;
  mode: string;
}

export interface FunctionRow {
  args: Arg[] | string;
  nargs: number;
  ndefaults: number;
  retset: boolean;
  rettype: string;
  /** `v`olatile, `s`table or `i`mmutable: only the last two may be called with GET/HEAD (PostgREST). */
  volatility: string;
  /** The relation whose row type the function returns (a table, view or composite type), if any. */
  retrel: string | null;
  /** The attributes of that row type. */
  retcols: Array<{ name: string; typname: string; castType: string }> | string | null;
}

// The overloads of public.<name> with their arguments and the columns of what they return, in one query.
const LOOKUP_SQL = `
select p.pronargs as nargs, p.pronargdefaults as ndefaults, p.provolatile as volatility, p.proretset as retset, p.prorettype::regtype::text as rettype,
  coalesce((select json_agg(json_build_object(
      'name', nullif(p.proargnames[i], ''), 'typname', t.typname, 'castType', format_type(t.oid, null),
      'mode', coalesce(p.proargmodes[i], 'i')) order by i)
    from generate_series(1, coalesce(array_length(p.proallargtypes, 1), p.pronargs)) i
    join pg_type t on t.oid = coalesce(p.proallargtypes[i], p.proargtypes[i - 1])), '[]') as args,
  (select c.relname from pg_class c join pg_namespace cn on cn.oid = c.relnamespace where c.oid = rt.typrelid and cn.nspname = $2) as retrel,
  (select json_agg(json_build_object('name', a.attname, 'typname', at.typname, 'castType', format_type(a.atttypid, null)) order by a.attnum)
     from pg_attribute a join pg_type at on at.oid = a.atttypid
     where rt.typrelid <> 0 and a.attrelid = rt.typrelid and a.attnum > 0 and not a.attisdropped) as retcols
from pg_proc p join pg_namespace n on n.oid = p.pronamespace join pg_type rt on rt.oid = p.prorettype
where n.nspname = $2 and p.proname = $1 and p.prokind = 'f'`;

const LOOKUP = statement(LOOKUP_SQL);

/** The overloads of `schema.name` (catalog rows, the same for every caller). */
export async function lookupFunctions(db: Queryable, name: string, schema: string): Promise<FunctionRow[]> {
  return (await db.query<FunctionRow>(LOOKUP, [name, schema])).rows;
}

// The functions of a schema PostgREST can call (as `callable` below): for the hint of a name not found.
const CALLABLE = statement(`
select distinct p.proname as name from pg_proc p join pg_namespace n on n.oid = p.pronamespace
where n.nspname = $1 and p.prokind = 'f' and (p.pronargs = 0
  or exists (select 1 from unnest(p.proargnames) with ordinality a(name, i)
             where a.name <> '' and coalesce(p.proargmodes[a.i], 'i') in ('i', 'b', 'v'))
  or (p.pronargs = 1 and p.proargtypes[0] in ('bytea'::regtype, 'json'::regtype, 'jsonb'::regtype, 'text'::regtype, 'xml'::regtype)))`);

/** The names of the functions of `schema` that can be called; asked only when a name has none. */
export async function callableNames(db: Queryable, schema: string, rows: FunctionRow[]): Promise<string[]> {
  if (rows.some(callable)) return [];
  return (await db.query<{ name: string }>(CALLABLE, [schema])).rows.map((r) => r.name);
}

/** The parameters of an overload (the catalog row may hold them as JSON text). */
export function parseArgs(r: FunctionRow): Arg[] {
  return typeof r.args === 'string' ? JSON.parse(r.args) : r.args;
}
/** Its input parameters, in order. */
export const inputArgs = (r: FunctionRow) =>
  parseArgs(r).filter((a) => a.mode === 'i' || a.mode === 'b' || a.mode === 'v');

/** The POST body's kind: JSON (the default), text/plain, or raw bytes (application/octet-stream). */
export type BodyKind = 'json' | 'text' | 'bytes';
const BODY_TYPE: Record<BodyKind, readonly string[]> = { json: ['json', 'jsonb'], text: ['text'], bytes: ['bytea'] };

/**
 * One unnamed parameter of the body's type (json/jsonb for JSON, text for text/plain, bytea for
 * octet-stream): the whole POST body is its value (PostgREST).
 */
export function takesBody(r: FunctionRow, kind: BodyKind | null): boolean {
  const inputs = inputArgs(r);
  return (
    kind !== null && inputs.length === 1 && inputs[0]!.name === null && BODY_TYPE[kind].includes(inputs[0]!.typname)
  );
}

/**
 * PostgREST exposes a function only when its parameters are named, or when its one unnamed
 * parameter can take a body (bytea, json, jsonb, text, xml); others cannot be called.
 */
function callable(r: FunctionRow): boolean {
  const inputs = inputArgs(r);
  if (!inputs.length || inputs.some((a) => a.name !== null)) return true;
  return inputs.length === 1 && ['bytea', 'json', 'jsonb', 'text', 'xml'].includes(inputs[0]!.typname);
}

/** The given names are the required parameters, plus any of the optional ones (PostgREST). */
function takesNames(r: FunctionRow, given: ReadonlySet<string>, kind: BodyKind | null): boolean {
  const inputs = inputArgs(r);
  if (!inputs.length) return given.size === 0 && (kind === null || kind === 'json');
  const names = inputs.map((a) => a.name ?? '');
  const required = new Set(names.slice(0, inputs.length - r.ndefaults));
  const optional = new Set(names.slice(inputs.length - r.ndefaults));
  return [...required].every((n) => given.has(n)) && [...given].every((g) => required.has(g) || optional.has(g));
}

/** `public.fn(a => integer, b => text)`: an overload as PostgREST names it. */
const signature = (schema: string, name: string, r: FunctionRow) =>
  `${schema}.${name}(${inputArgs(r)
    .map((a) => `${a.name ?? ''} => ${a.castType}`)
    .join(', ')})`;

/** `(a, b)`: parameter names sorted, as PostgREST compares them for its hint. */
const nameList = (names: readonly string[]) => `(${[...names].sort().join(', ')})`;

/**
 * PostgREST's hint for a function it did not find: the closest overload's parameters when the
 * name has callable overloads, else the closest callable function of the schema by name.
 */
function notFoundHint(
  schema: string,
  name: string,
  given: string[],
  overloads: FunctionRow[],
  others: readonly string[],
): string | undefined {
  const found = overloads.length
    ? closest(
        overloads.map((r) => nameList(inputArgs(r).map((a) => a.name ?? ''))),
        nameList(given),
      )
    : closest(others, name, 0.75);
  if (found === null) return undefined;
  return `Perhaps you meant to call the function ${schema}.${overloads.length ? name : ''}${found}`;
}

/** The function was not found with these names: PostgREST's PGRST202 (message, details, hint). */
function notFound(
  schema: string,
  name: string,
  given: string[],
  kind: BodyKind | null,
  overloads: FunctionRow[],
  others: readonly string[],
): AppError {
  const raw = kind === 'text' || kind === 'bytes';
  const names = [...given].sort();
  const withParams = names.length
    ? ` with parameter${names.length > 1 ? 's' : ''} ${names.join(', ')}`
    : ' without parameters';
  const searched =
    kind === 'text'
      ? ' with a single unnamed text parameter'
      : kind === 'bytes'
        ? ' with a single unnamed bytea parameter'
        : `${withParams}${kind === 'json' ? ' or with a single unnamed json/jsonb parameter' : ''}`;
  return new AppError('RPC_NOT_FOUND', {
    message: `Could not find the function ${schema}.${name}${raw ? '' : names.length ? `(${names.join(', ')})` : ' without parameters'} in the schema cache`,
    details: `Searched for the function ${schema}.${name}${searched}, but no matches were found in the schema cache.`,
    hint: raw ? undefined : notFoundHint(schema, name, given, overloads, others),
    pgrstCode: 'PGRST202',
  });
}

/**
 * The overload the given argument names select, as PostgREST's `findProc`: the callable
 * overloads whose required parameters are given (and no unknown one); else the one unnamed
 * parameter that takes the body. None: 404 PGRST202; several: 300 PGRST203.
 */
export function pickOverload(
  rows: FunctionRow[],
  schema: string,
  name: string,
  given: string[],
  kind: BodyKind | null,
  others: readonly string[] = [],
): FunctionRow {
  const candidates = rows.filter(callable);
  const names = new Set(given);
  let found = candidates.filter((r) => takesNames(r, names, kind));
  if (!found.length) found = candidates.filter((r) => takesBody(r, kind));
  if (found.length === 1) return found[0]!;
  if (!found.length) throw notFound(schema, name, given, kind, candidates, others);
  const listed = found.sort(
    (a, b) =>
      inputArgs(a).length - inputArgs(b).length || signature(schema, name, a).localeCompare(signature(schema, name, b)),
  );
  throw new AppError('AMBIGUOUS_FUNCTION', {
    message: `Could not choose the best candidate function between: ${listed.map((r) => signature(schema, name, r)).join(', ')}`,
    hint: 'Try renaming the parameters or the function itself in the database so function overloading can be resolved',
    pgrstCode: 'PGRST203',
  });
}
