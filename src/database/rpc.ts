import { AppError } from '../errors/index.js';
import { shaped, type Queryable } from '../db/types.js';
import { isName, quoteIdent, safe, schemaRef } from './ident.js';
import { toParam, valueKind, apiType } from './types.js';
import { decode, parseRecordsQuery, splitQuery } from './query.js';
import { compileRead, type CompileContext } from './compile.js';
import type { ColumnMeta, TableMeta } from './schema.js';
import type { BodyFormat } from './media.js';
import {
  type BodyKind,
  type FunctionRow,
  inputArgs,
  callableNames,
  lookupFunctions,
  parseArgs,
  pickOverload,
  takesBody,
  type Arg,
} from './overloads.js';

export { type BodyKind, type FunctionRow, lookupFunctions } from './overloads.js';

/** What a call asks for: arguments from the body (POST) or the query string (GET/HEAD), and the query of the result. */
export interface RpcRequest {
  name: string;
  /** The raw query string: arguments (GET) and the result's select, filters, order, limit, offset. */
  rawQuery: string;
  /** POST: the JSON body (named arguments, or the one unnamed json argument). undefined on GET. */
  body?: unknown;
  range?: { offset: number; limit: number };
  /** The body format of a result of rows (Accept). */
  format?: BodyFormat;
  /** POST: what the body is (its Content-Type); a Buffer without it is raw bytes. */
  bodyKind?: BodyKind;
  /** The exposed schema of the function (Accept-/Content-Profile; default public). */
  schema?: string;
  /** `application/vnd.pgrst.plan` (admins): EXPLAIN the call's statement instead of answering it. */
  plan?: { as: 'json' | 'text'; options: string[] } | null;
}

/** A function's answer: a relation's page (with the total), one value, or nothing (void). */
export interface RpcResult {
  kind: 'rows' | 'object' | 'value' | 'void' | 'plan';
  body: string | null;
  total: number;
  offset: number;
  count: number;
}

/**
 * Splits a raw query string into the pairs whose key `isArg` claims (decoded: a GET RPC's
 * arguments) and the raw rest (select, filters, order, ... of the result), keeping its order.
 */
function partitionQuery(raw: string, isArg: (key: string) => boolean): { args: Record<string, string>; rest: string } {
  splitQuery(raw); // the bounds and the percent-encoding check
  const args: Record<string, string> = {};
  const rest: string[] = [];
  for (const part of raw.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const key = decode(eq < 0 ? part : part.slice(0, eq));
    if (isArg(key)) args[key] = decode(eq < 0 ? '' : part.slice(eq + 1));
    else rest.push(part);
  }
  return { args, rest: rest.join('&') };
}

/** The columns of the result when it is a relation: the row type's, or the OUT/TABLE parameters. */
function resultTable(ctx: CompileContext, fn: FunctionRow, name: string): TableMeta | null {
  if (fn.retrel && ctx.tables.has(fn.retrel)) return ctx.tables.get(fn.retrel)!;
  const raw = fn.retcols ? (typeof fn.retcols === 'string' ? JSON.parse(fn.retcols) : fn.retcols) : null;
  const outs = parseArgs(fn).filter((a) => a.mode === 'o' || a.mode === 't' || a.mode === 'b');
  const cols = (raw as Arg[] | null) ?? (fn.rettype === 'record' && outs.length ? outs : null);
  if (!cols) return null;
  const columnList = cols.map(
    (c): ColumnMeta => ({
      name: c.name ?? '',
      typname: c.typname,
      kind: valueKind(c.typname),
      castType: c.castType,
      type: apiType(c.typname),
      nullable: true,
      default: null,
      isPrimaryKey: false,
      unique: false,
      foreignKey: null,
    }),
  );
  return {
    name,
    isTable: false,
    rlsEnabled: false,
    columns: new Map(columnList.map((c) => [c.name, c])),
    columnList,
    primaryKey: [],
  };
}

/** `public."fn"(named => $n::type, ...)`, every value a bind parameter. */
function callSql(
  ctx: CompileContext,
  schema: string,
  name: string,
  fn: FunctionRow,
  args: Record<string, unknown>,
  kind: BodyKind | null,
  body: unknown,
): string {
  const p = ctx.p;
  const source = kind === null ? 'query' : 'body';
  if (takesBody(fn, kind)) {
    const arg = inputArgs(fn)[0]!;
    // text/plain and application/octet-stream arrive as bytes; a JSON body as its value.
    const value = Buffer.isBuffer(body)
      ? arg.typname === 'bytea'
        ? body
        : body.toString('utf8')
      : arg.typname === 'bytea'
        ? null
        : JSON.stringify(body ?? null);
    if (value === null)
      throw new AppError('INVALID_INPUT', {
        message: `Function "${name}" takes raw bytes: send them with Content-Type: application/octet-stream.`,
      });
    return `${schemaRef(schema)}.${quoteIdent(name)}(${p.add(value)}::${arg.castType})`;
  }
  // `{"": value}` gives the one unnamed parameter its value, by position (PostgREST).
  const named = inputArgs(fn)
    .filter((a) => Object.hasOwn(args, a.name ?? ''))
    .map((a) => {
      const key = a.name ?? '';
      const typed = { name: key || 'the unnamed parameter', kind: valueKind(a.typname), castType: a.castType };
      const value = args[key];
      const to = a.name === null ? '' : `${quoteIdent(a.name)} => `;
      // A table or composite row type from a JSON object (PostgREST), field by field.
      if (typed.kind === 'other' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
        return `${to}json_populate_record(null::${a.castType}, ${p.add(JSON.stringify(value))}::json)`;
      }
      return `${to}${p.add(toParam(typed, value, source))}::${a.castType}`;
    });
  return `${schemaRef(schema)}.${quoteIdent(name)}(${named.join(', ')})`;
}

/**
 * Calls public.<name> as the caller (tx already runs as them). A function returning rows
 * (setof a table or row type, or TABLE/OUT columns) is read as a relation in ONE statement:
 * `with src as materialized (select * from fn(args)) ... where ... order ... limit`, so select,
 * filters, order, limit/offset, Range and embedding apply as on a table. A scalar answers its value.
 */
export async function callFunction(
  tx: Queryable,
  ctx: CompileContext,
  req: RpcRequest,
  lookup?: (name: string, schema: string) => Promise<FunctionRow[]>,
): Promise<RpcResult> {
  const { name } = req;
  if (!isName(name))
    throw new AppError('RPC_NOT_FOUND', { message: `No function "${safe(name)}".`, pgrstCode: 'PGRST202' });
  const schema = req.schema ?? 'public';
  const rows = lookup ? await lookup(name, schema) : await lookupFunctions(tx, name, schema);
  const source = req.body === undefined ? 'query' : 'body';
  const argNames = new Set(
    rows.flatMap((r) =>
      inputArgs(r)
        .map((a) => a.name)
        .filter((n): n is string => n !== null),
    ),
  );
  const split = partitionQuery(req.rawQuery, (k) => source === 'query' && argNames.has(k));
  const hasBody = source === 'body' && req.body !== null && typeof req.body === 'object' && !Buffer.isBuffer(req.body);
  const args: Record<string, unknown> =
    source === 'query' ? split.args : hasBody && !Array.isArray(req.body) ? (req.body as Record<string, unknown>) : {};
  const kind: BodyKind | null =
    source === 'query' ? null : (req.bodyKind ?? (Buffer.isBuffer(req.body) ? 'bytes' : 'json'));
  const fn = pickOverload(rows, schema, name, Object.keys(args), kind, await callableNames(tx, schema, rows));
  if (source === 'query' && fn.volatility === 'v') {
    throw new AppError('READ_ONLY_CALL', {
      message: `Function "${name}" is VOLATILE (it may change data), so GET and HEAD cannot call it; use POST.`,
      pgrstCode: '25006',
    });
  }
  const call = callSql(ctx, schema, name, fn, args, kind, req.body);
  const q = parseRecordsQuery(split.rest);
  const table = fn.rettype === 'void' ? null : resultTable(ctx, fn, name);
  if (!table) {
    if (q.select || q.filters.length || q.order.length || q.limit !== null || q.offset !== null) {
      throw new AppError('INVALID_QUERY', {
        message: `Function "${name}" returns ${fn.rettype}, not rows: select, filters, order, limit and offset apply to functions that return rows.`,
      });
    }
    return req.plan ? explain(tx, req.plan, scalarSql(fn, call), ctx.p.values) : scalarCall(tx, ctx, fn, call);
  }
  if (req.range) {
    q.offset = req.range.offset;
    q.limit = req.range.limit;
  }
  const stmt = compileRead(ctx, table, q, null, {
    source: { cte: `src as materialized (select * from ${call})`, from: 'src' },
    format: fn.retset ? req.format : 'json',
  });
  if (req.plan) return explain(tx, req.plan, stmt.text, stmt.values);
  const r = await tx.query<{ body: string; total: number | string }>(shaped(stmt.text), stmt.values);
  const total = Number(r.rows[0]!.total);
  const offset = q.offset ?? 0;
  const count = Math.max(0, Math.min(q.limit ?? Infinity, total - offset));
  if (fn.retset) return { kind: 'rows', body: r.rows[0]!.body, total, offset, count };
  // One row type, not setof: the object itself (null when the function returned null).
  const one = JSON.parse(r.rows[0]!.body) as unknown[];
  return { kind: 'object', body: one.length ? JSON.stringify(one[0]) : 'null', total, offset, count };
}

function scalarSql(fn: FunctionRow, call: string): string {
  return fn.rettype === 'void'
    ? `select 'null'::text as body from ${call} r`
    : fn.retset
      ? `select coalesce(json_agg(r.*), '[]')::text as body from ${call} r`
      : `select coalesce(to_json(${call})::text, 'null') as body`;
}

const PLAN_OPTIONS = new Set(['analyze', 'verbose', 'settings', 'buffers', 'wal']);

/** The execution plan of the call's statement (the caller rolls back: `analyze` runs it). */
async function explain(
  tx: Queryable,
  plan: NonNullable<RpcRequest['plan']>,
  text: string,
  values: unknown[],
): Promise<RpcResult> {
  const options = [`format ${plan.as}`, ...plan.options.filter((o) => PLAN_OPTIONS.has(o))].join(', ');
  const { rows } = await tx.query<{ 'QUERY PLAN': unknown }>(`explain (${options}) ${text}`, values);
  const cells = rows.map((r) => r['QUERY PLAN']);
  const body =
    plan.as === 'json' ? (typeof cells[0] === 'string' ? cells[0] : JSON.stringify(cells[0])) : cells.join('\n');
  return { kind: 'plan', body, total: 0, offset: 0, count: 0 };
}

async function scalarCall(tx: Queryable, ctx: CompileContext, fn: FunctionRow, call: string): Promise<RpcResult> {
  const r = await tx.query<{ body: string }>(shaped(scalarSql(fn, call)), ctx.p.values);
  const body = r.rows[0]?.body ?? 'null';
  if (fn.rettype === 'void') return { kind: 'void', body: null, total: 0, offset: 0, count: 0 };
  return { kind: 'value', body, total: 1, offset: 0, count: 1 };
}
