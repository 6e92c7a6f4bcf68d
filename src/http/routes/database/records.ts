import { Type } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../../errors/index.js';
import type { RoutePlugin } from '../../types.js';
import { InsertRows, Row, TableRef } from '../../../database/schemas.js';
import type { Page, RecordsService, WriteResult } from '../../../database/records.js';
import { parseAccept, parseCsvBody } from '../../../database/media.js';
import {
  checkProfile,
  contentRange,
  parsePrefer,
  parseRange,
  preferenceApplied,
  type Prefer,
} from '../../../database/prefer.js';

const Rows = Type.Array(Row);
const TableParams = Type.Object({ table: TableRef });
const Headers = Type.Object({
  prefer: Type.Optional(
    Type.String({
      description:
        'return=minimal|representation|headers-only, count=exact|planned|estimated, resolution=merge-duplicates|ignore-duplicates, missing=default, tx=rollback',
    }),
  ),
  range: Type.Optional(
    Type.String({ maxLength: 64, description: 'first-last (items), e.g. 0-19; answered with Content-Range' }),
  ),
  accept: Type.Optional(
    Type.String({
      description:
        'application/json (default); application/vnd.pgrst.object+json: exactly one row, as an object (else 406 PGRST116); text/csv; application/vnd.pgrst.array+json;nulls=stripped; application/geo+json (PostGIS); application/vnd.pgrst.plan+json|text (admins); anything else 406 PGRST107',
    }),
  ),
});
const FILTERS =
  'PostgREST grammar (docs/database.md): filters <column>=[not.]<op>.<value> (eq, neq, gt, gte, lt, lte, like, ilike, match, imatch, in, is, isdistinct, fts, plfts, phfts, wfts, cs, cd, ov, sl, sr, nxl, nxr, adj); or=(...), and=(...); select with aliases, casts and embedded relations (author:profiles(name)); <relation>.<column>= filters and <relation>.order; order (col.asc|desc[.nullsfirst|.nullslast], several keys), limit (1-1000, default 100), offset.';
// Every records handler reaches the database only through withCaller, which checks the
// session of a user token in the same transaction. `postgrest` adds code/details/hint to errors.
const any = { access: 'any' as const, handlerChecksSession: true, postgrest: true };
const OBJECT = 'application/vnd.pgrst.object+json';

/** The raw query string: filters keep their order and repeated keys (the bounded parser reads it). */
function rawQuery(request: FastifyRequest): string {
  const i = request.url.indexOf('?');
  return i < 0 ? '' : request.url.slice(i + 1);
}

/** `Accept: application/vnd.pgrst.object+json` (postgrest-js `.single()`). */
function wantsObject(request: FastifyRequest): boolean {
  return (request.headers.accept ?? '').includes(OBJECT);
}

function range(request: FastifyRequest) {
  const unit = request.headers['range-unit'];
  return parseRange(request.headers.range, Array.isArray(unit) ? unit[0] : unit);
}

/** JSON text built by Postgres goes out as is (no parse and re-serialise in Node). */
function sendJson(reply: FastifyReply, status: number, body: string, single = false) {
  return reply
    .status(status)
    .type(single ? `${OBJECT}; charset=utf-8` : 'application/json; charset=utf-8')
    .send(body);
}

function applied(reply: FastifyReply, prefer: Prefer) {
  const header = preferenceApplied(prefer);
  if (header) reply.header('Preference-Applied', header);
}

async function read(records: RecordsService, request: FastifyRequest, reply: FastifyReply) {
  const schema = profile(records, reply, request, false);
  const media = parseAccept(request.headers.accept);
  const single = media.single;
  if (media.plan) {
    const plan = await records.plan(request.identity, tableOf(request), rawQuery(request), media.plan, {
      range: range(request),
      single,
      schema,
    });
    return reply.status(200).type(media.contentType).send(plan);
  }
  const prefer = parsePrefer(request.headers.prefer);
  // /api/db counts only when `Prefer: count=` asks (PostgREST: `Content-Range: 0-19/*`
  // otherwise); the spec's primary path always sends the total (X-Total-Count).
  const short = request.url.startsWith('/api/db/');
  const page: Page = await records.select(request.identity, tableOf(request), rawQuery(request), {
    range: range(request),
    single,
    format: media.format,
    schema,
    count: prefer.count ?? (short ? 'none' : 'exact'),
  });
  applied(reply, prefer);
  if (page.total !== null) reply.header('X-Total-Count', String(page.total));
  reply.header('Content-Range', contentRange(page.offset, page.count, page.total));
  if (page.total === null) return reply.status(200).type(media.contentType).send(page.body);
  // A Range that starts past the last row is unsatisfiable (PostgREST answers 416 too).
  if (request.headers.range && page.count === 0 && page.offset > 0 && page.offset >= page.total) {
    throw new AppError('INVALID_RANGE', {
      message: `The Range header starts at item ${page.offset}, but only ${page.total} rows match.`,
      details: `An offset of ${page.offset} was requested, but there are only ${page.total} rows.`,
      pgrstCode: 'PGRST103',
      headers: { 'content-range': `*/${page.total}` },
    });
  }
  // PostgREST: 206 when a count was asked for and the page is part of the rows (on /api/db,
  // its path; the spec's primary path keeps 200).
  const partial = prefer.count !== null && page.count < page.total && short;
  return reply
    .status(partial ? 206 : 200)
    .type(media.contentType)
    .send(page.body);
}

/** The answer of a write: the rows with representation (status `withBody`), else `minimal` (201 [] / 201 empty / 204). */
function answerWrite(
  reply: FastifyReply,
  prefer: Prefer,
  result: WriteResult,
  statuses: { withBody: number; minimal: number; minimalBody: string | null },
  single: boolean,
) {
  applied(reply, prefer);
  if (prefer.count) reply.header('Content-Range', `*/${result.count}`);
  if (result.body !== null) return sendJson(reply, statuses.withBody, result.body, single);
  if (statuses.minimalBody !== null && prefer.return === null)
    return sendJson(reply, statuses.minimal, statuses.minimalBody);
  return reply.status(statuses.minimal).send();
}

/** The request's exposed schema (Accept-/Content-Profile), echoed as Content-Profile when several are exposed (PostgREST). */
export function profile(records: RecordsService, reply: FastifyReply, request: FastifyRequest, write: boolean): string {
  const schema = checkProfile(request.headers, records.exposedSchemas, write);
  if (records.exposedSchemas.length > 1) reply.header('Content-Profile', schema);
  return schema;
}

function writeOptions(records: RecordsService, request: FastifyRequest, reply: FastifyReply, prefer: Prefer) {
  return { ...prefer, single: wantsObject(request), schema: profile(records, reply, request, true) };
}

type TableRequest = FastifyRequest;
const tableOf = (request: FastifyRequest) => (request.params as { table: string }).table;

const isCsv = (request: FastifyRequest) => /^text\/csv\b/i.test(request.headers['content-type'] ?? '');

async function insert(records: RecordsService, request: TableRequest, reply: FastifyReply, minimalBody: string | null) {
  const prefer = parsePrefer(request.headers.prefer);
  const rows = (Array.isArray(request.body) ? request.body : [request.body]) as Array<Record<string, unknown>>;
  const opts = { ...writeOptions(records, request, reply, prefer), csv: isCsv(request) };
  const result = await records.insert(request.identity, tableOf(request), rows, rawQuery(request), opts);
  // PostgREST: a merge-duplicates upsert that inserted no row (every row merged) is 200, not
  // 201; ignore-duplicates stays 201 (on /api/db, its path; the spec's primary path answers 201).
  const status =
    prefer.resolution === 'merge' && result.inserted === 0 && request.url.startsWith('/api/db/') ? 200 : 201;
  return answerWrite(reply, prefer, result, { withBody: status, minimal: status, minimalBody }, opts.single);
}

async function update(records: RecordsService, request: TableRequest, reply: FastifyReply) {
  const prefer = parsePrefer(request.headers.prefer);
  const opts = writeOptions(records, request, reply, prefer);
  const result = await records.update(
    request.identity,
    tableOf(request),
    rawQuery(request),
    request.body as Record<string, unknown>,
    opts,
  );
  return answerWrite(reply, prefer, result, { withBody: 200, minimal: 204, minimalBody: null }, opts.single);
}

async function remove(records: RecordsService, request: TableRequest, reply: FastifyReply) {
  const prefer = parsePrefer(request.headers.prefer);
  const opts = writeOptions(records, request, reply, prefer);
  const result = await records.delete(request.identity, tableOf(request), rawQuery(request), opts);
  return answerWrite(reply, prefer, result, { withBody: 200, minimal: 204, minimalBody: null }, opts.single);
}

/** The spec's primary insert takes an array: a single object is a 400 that says how to send it. */
async function requireArray(request: FastifyRequest) {
  if (isCsv(request)) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', {
      message:
        'POST /api/database/records/{tableName} takes a JSON array; CSV bodies go to POST /api/db/{table} (Content-Type: text/csv).',
    });
  }
  if (request.body !== null && typeof request.body === 'object' && !Array.isArray(request.body)) {
    throw new AppError('INVALID_INPUT', {
      message:
        'POST /api/database/records/{tableName} takes a JSON array of records: wrap the row in [...], e.g. [{"title":"x"}].',
      nextActions:
        'Send [row] instead of row (with @insforge/sdk: .insert([row]) instead of .insert(row)), or POST the single object to /api/db/{table}.',
    });
  }
}

/**
 * Records: the primary path /api/database/records/{table} and the short path /api/db/{table},
 * in the PostgREST dialect (HEAD counts come with every GET). Every request runs as the
 * caller, so RLS decides the rows, embedded ones included.
 */
export const recordRoutes: RoutePlugin<'records'> = async (app, { deps }) => {
  const { records } = deps;
  // PostgREST's CSV bulk insert: the rows of a text/csv body (POST /api/db/{table} only).
  app.addContentTypeParser('text/csv', { parseAs: 'string' }, (request, body, done) => {
    if (request.method !== 'POST')
      return done(
        new AppError('UNSUPPORTED_MEDIA_TYPE', {
          message: 'Only POST (insert) takes a text/csv body; send JSON to PATCH.',
        }),
        undefined,
      );
    try {
      done(null, parseCsvBody(body as string));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  const readSchema = (summary: string) => ({
    config: any,
    schema: {
      tags: ['records'],
      summary,
      description: FILTERS,
      params: TableParams,
      headers: Headers,
      response: { 200: Type.Union([Rows, Row]) },
    },
  });

  app.get(
    '/api/database/records/:table',
    readSchema('Read records (HEAD: only the count in Content-Range)'),
    (request, reply) => read(records, request, reply),
  );
  app.get(
    '/api/db/:table',
    readSchema('Read records; a Range header (start-end) is answered with Content-Range'),
    (request, reply) => read(records, request, reply),
  );

  app.post(
    '/api/database/records/:table',
    {
      config: any,
      preValidation: requireArray,
      schema: {
        tags: ['records'],
        summary:
          'Insert records (a JSON array); upsert with Prefer: resolution=merge-duplicates (on_conflict=); columns=, select=',
        params: TableParams,
        headers: Headers,
        body: InsertRows,
        response: { 201: Type.Union([Rows, Row]) },
      },
    },
    (request, reply) => insert(records, request, reply, '[]'),
  );

  app.post(
    '/api/db/:table',
    {
      config: any,
      schema: {
        tags: ['records'],
        summary: 'Insert a record (or an array); 201 without body unless Prefer: return=representation',
        params: TableParams,
        headers: Headers,
        body: Type.Union([Row, InsertRows]),
        response: { 201: Type.Union([Rows, Row, Type.Null()]) },
      },
    },
    (request, reply) => insert(records, request, reply, null),
  );

  // ---- both paths: update and delete behave the same on each ----
  for (const url of ['/api/database/records/:table', '/api/db/:table']) {
    app.patch(
      url,
      {
        config: any,
        schema: {
          tags: ['records'],
          summary: 'Update the records matching the filters (at least one); 204 unless Prefer: return=representation',
          description: FILTERS,
          params: TableParams,
          headers: Headers,
          body: Row,
          response: { 200: Type.Union([Rows, Row]), 204: Type.Null() },
        },
      },
      (request, reply) => update(records, request, reply),
    );

    app.delete(
      url,
      {
        config: any,
        schema: {
          tags: ['records'],
          summary: 'Delete the records matching the filters (at least one); 204 unless Prefer: return=representation',
          description: FILTERS,
          params: TableParams,
          headers: Headers,
          response: { 200: Type.Union([Rows, Row]), 204: Type.Null() },
        },
      },
      (request, reply) => remove(records, request, reply),
    );
  }
};
