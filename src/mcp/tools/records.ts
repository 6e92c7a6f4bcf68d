import { randomUUID } from 'node:crypto';
import { Type } from 'typebox';
import { AppError } from '../../errors/index.js';
import { pgErrorInfo } from '../../db/errors.js';
import { isRlsRefusal } from '../../database/policy.js';
import type { Identity } from '../../auth/identity.js';
import { tool, type ToolContext } from '../types.js';
import { table } from '../format.js';
import { InsertRows, Row, TableRef } from '../../database/schemas.js';

const As = Type.Object(
  {
    role: Type.Union([Type.Literal('anon'), Type.Literal('user'), Type.Literal('admin')], {
      description: 'anon: the anon key; user: a signed-in user (give userId); admin: bypasses RLS',
    }),
    userId: Type.Optional(
      Type.String({ format: 'uuid', description: 'With role user: whose rows to see (list-users shows ids)' }),
    ),
  },
  { default: { role: 'admin' } },
);

interface RecordsArgs {
  table: string;
  method: 'select' | 'insert' | 'update' | 'delete';
  query: string;
  body?: unknown;
  as: { role: 'anon' | 'user' | 'admin'; userId?: string };
}

/** The identity the records service runs as: the same RLS transaction as a real request of that caller. */
async function identityOf(as: RecordsArgs['as'], ctx: ToolContext): Promise<Identity> {
  if (as.role === 'admin') return { kind: 'admin' };
  if (as.role === 'anon') return { kind: 'anon' };
  if (!as.userId)
    throw new AppError('INVALID_INPUT', {
      message: 'role "user" needs a userId.',
      nextActions: 'Pass as: {role: "user", userId: "<id>"}; list-users shows ids, create-user makes a test user.',
    });
  const user = await ctx.services.auth.getUser(as.userId);
  const now = Math.floor(Date.now() / 1000);
  // No session row: the admin acts as this user for this one call, so there is no session to check.
  const sid = randomUUID();
  return {
    kind: 'user',
    userId: user.id,
    email: user.email,
    sessionId: sid,
    sessionChecked: true,
    claims: { sub: user.id, email: user.email, role: 'authenticated', sid, iat: now, exp: now + 60 },
  };
}

const rowsOf = (body: string | null) => (body ? (JSON.parse(body) as unknown[]) : []);

const Table = TableRef;
const Query = Type.String({
  default: '',
  maxLength: 8192,
  description: 'PostgREST query string, e.g. "select=id,title&done=eq.false&order=id.desc&limit=20"',
});

/** Records as a chosen caller: the records service of /api/database/records/{table}, RLS applied, to try policies. */
export const recordsTools = [
  tool<Omit<RecordsArgs, 'method' | 'body'>>({
    name: 'select-records',
    description:
      'Read records of a table AS a chosen caller (anon, a given user, or admin) with the same row-level security as a real request: ' +
      "the way to test RLS policies (e.g. as user B, expect none of user A's rows). Paged: default limit 50.",
    input: Type.Object({ table: Table, query: Query, as: As }),
    readOnly: true,
    run: async (a, ctx) => {
      const page = await ctx.services.records.select(await identityOf(a.as, ctx), a.table, a.query || 'limit=50');
      return table(rowsOf(page.body), { offset: page.offset, limit: page.count, total: page.total ?? undefined });
    },
  }),
  tool<RecordsArgs>({
    name: 'write-records',
    description:
      'Insert, update or delete records AS a chosen caller (anon, a given user, or admin), RLS applied: a refused write answers why (which policy). ' +
      'insert: body is an object or an array of objects; update: body is an object of changes and query a filter (e.g. "id=eq.3"); delete: query a filter.',
    input: Type.Object({
      table: Table,
      method: Type.Union([Type.Literal('insert'), Type.Literal('update'), Type.Literal('delete')]),
      query: Query,
      body: Type.Optional(Type.Union([Row, InsertRows])),
      as: As,
    }),
    readOnly: false,
    run: async (a, ctx) => {
      const identity = await identityOf(a.as, ctx);
      try {
        return await write(a, identity, ctx);
      } catch (err) {
        throw await refusal(err, a, identity, ctx);
      }
    },
  }),
];

/** A write refused by the database for want of a privilege (42501) as the agent needs it: the grant it lacks. */
async function refusal(err: unknown, a: RecordsArgs, identity: Identity, ctx: ToolContext): Promise<unknown> {
  // An RLS refusal is explained by the records service (the policies it failed); a missing grant here.
  if (!(err instanceof AppError) || err.code !== 'FORBIDDEN' || pgErrorInfo(err.cause)?.code !== '42501') return err;
  if (isRlsRefusal(err)) return err;
  if (a.method === 'select' || identity.kind === 'admin') return err;
  const role = identity.kind === 'anon' ? 'anon' : 'authenticated';
  const why = await ctx.services.tables.refusal(a.table, a.method, role).catch(() => null);
  if (!why) return err;
  return new AppError('FORBIDDEN', {
    message: why,
    nextActions: `Write as a caller the policies allow, or change them with run-raw-sql (alter policy … / create policy …); get-table-schema shows the table.`,
    cause: err.cause,
  });
}

async function write(a: RecordsArgs, identity: Identity, ctx: ToolContext): Promise<string> {
  const records = ctx.services.records;
  const opts = { representation: true };
  if (a.method === 'delete') {
    const r = await records.delete(identity, a.table, a.query, opts);
    return `deleted ${r.count}\n${table(rowsOf(r.body))}`;
  }
  if (a.body === undefined || a.body === null || typeof a.body !== 'object') {
    throw new AppError('INVALID_INPUT', {
      message: `${a.method} needs a body: an object${a.method === 'insert' ? ' or an array of objects' : ' of changes'}.`,
    });
  }
  const r =
    a.method === 'insert'
      ? await records.insert(
          identity,
          a.table,
          (Array.isArray(a.body) ? a.body : [a.body]) as Array<Record<string, unknown>>,
          a.query,
          { ...opts, resolution: null, missingDefault: true },
        )
      : await records.update(identity, a.table, a.query, a.body as Record<string, unknown>, opts);
  return `${a.method === 'insert' ? 'inserted' : 'updated'} ${r.count}\n${table(rowsOf(r.body))}`;
}
