import { Type } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoutePlugin } from '../../types.js';
import { contentRange, parsePrefer, parseRange, type Page } from '../../../database/records.js';

const Row = Type.Record(Type.String(), Type.Unknown());
const Rows = Type.Array(Row);
const TableParams = Type.Object({ table: Type.String({ maxLength: 256 }) });
const PreferHeaders = Type.Object({
  prefer: Type.Optional(Type.String({ description: 'return=representation; resolution=merge-duplicates or ignore-duplicates' })),
});
const FILTERS =
  'Filters are <column>=<op>.<value> with op eq, neq, gt, gte, lt, lte, like, ilike, in, is (and not.<op>); or=(...), and=(...); select, order (col.asc|desc[.nullsfirst|.nullslast], several keys), limit (1-1000, default 100), offset.';
// Every records handler reaches the database only through withCaller, which checks the
// session of a user token in the same transaction.
const any = { access: 'any' as const, handlerChecksSession: true };

/** The raw query string: filters keep their order and repeated keys (the bounded parser reads it). */
function rawQuery(request: FastifyRequest): string {
  const i = request.url.indexOf('?');
  return i < 0 ? '' : request.url.slice(i + 1);
}

/** JSON text built by Postgres goes out as is (no parse and re-serialise in Node). */
function sendJson(reply: FastifyReply, status: number, body: string) {
  return reply.status(status).type('application/json; charset=utf-8').send(body);
}

function empty(reply: FastifyReply, status: number) {
  return reply.status(status).send();
}

function pageHeaders(reply: FastifyReply, page: Page) {
  reply.header('X-Total-Count', String(page.total));
  reply.header('Content-Range', contentRange(page));
}

/**
 * Records: the primary path /api/database/records/{table} and the short path /api/db/{table}
 * (PostgREST style), plus RPC. Every request runs as the caller, so RLS decides the rows.
 */
export const recordRoutes: RoutePlugin = async (app, { deps }) => {
  const { records } = deps;

  // ---- primary path ----
  app.get(
    '/api/database/records/:table',
    {
      config: any,
      schema: { tags: ['records'], summary: 'Read records', description: FILTERS, params: TableParams, response: { 200: Rows } },
    },
    async (request, reply) => {
      const page = await records.select(request.identity, request.params.table, rawQuery(request));
      pageHeaders(reply, page);
      return sendJson(reply, 200, page.body);
    },
  );

  app.post(
    '/api/database/records/:table',
    {
      config: any,
      schema: {
        tags: ['records'],
        summary: 'Insert records (a JSON array); upsert with on_conflict and Prefer: resolution=merge-duplicates',
        params: TableParams,
        headers: PreferHeaders,
        body: Type.Array(Row, { minItems: 1, maxItems: 1000 }),
        response: { 201: Rows },
      },
    },
    async (request, reply) => {
      const prefer = parsePrefer(request.headers.prefer);
      const body = await records.insert(request.identity, request.params.table, request.body, rawQuery(request), prefer);
      return sendJson(reply, 201, body ?? '[]');
    },
  );

  // ---- short path ----
  app.get(
    '/api/db/:table',
    {
      config: any,
      schema: {
        tags: ['records'],
        summary: 'Read records; a Range header (start-end) is answered with Content-Range',
        description: FILTERS,
        params: TableParams,
        headers: Type.Object({ range: Type.Optional(Type.String({ maxLength: 64 })) }),
        response: { 200: Rows },
      },
    },
    async (request, reply) => {
      const page = await records.select(request.identity, request.params.table, rawQuery(request), parseRange(request.headers.range));
      pageHeaders(reply, page);
      return sendJson(reply, 200, page.body);
    },
  );

  app.post(
    '/api/db/:table',
    {
      config: any,
      schema: {
        tags: ['records'],
        summary: 'Insert a record (or an array); 201 without body unless Prefer: return=representation',
        params: TableParams,
        headers: PreferHeaders,
        body: Type.Union([Row, Type.Array(Row, { minItems: 1, maxItems: 1000 })]),
        response: { 201: Type.Union([Rows, Type.Null()]) },
      },
    },
    async (request, reply) => {
      const prefer = parsePrefer(request.headers.prefer);
      const rows = Array.isArray(request.body) ? request.body : [request.body];
      const body = await records.insert(request.identity, request.params.table, rows, rawQuery(request), prefer);
      return body === null ? empty(reply, 201) : sendJson(reply, 201, body);
    },
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
          headers: PreferHeaders,
          body: Row,
          response: { 200: Rows, 204: Type.Null() },
        },
      },
      async (request, reply) => {
        const prefer = parsePrefer(request.headers.prefer);
        const body = await records.update(request.identity, request.params.table, rawQuery(request), request.body, prefer);
        return body === null ? empty(reply, 204) : sendJson(reply, 200, body);
      },
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
          headers: PreferHeaders,
          response: { 200: Rows, 204: Type.Null() },
        },
      },
      async (request, reply) => {
        const prefer = parsePrefer(request.headers.prefer);
        const body = await records.delete(request.identity, request.params.table, rawQuery(request), prefer);
        return body === null ? empty(reply, 204) : sendJson(reply, 200, body);
      },
    );
  }

  app.post(
    '/api/db/rpc/:fn',
    {
      config: any,
      schema: {
        tags: ['records'],
        summary: 'Call public.<fn> with named arguments as the caller: set-returning → array, scalar → value',
        params: Type.Object({ fn: Type.String({ maxLength: 256 }) }),
        body: Type.Optional(Row),
        response: { 200: Type.Unknown() },
      },
    },
    async (request, reply) => {
      const body = await records.rpc(request.identity, request.params.fn, (request.body as Record<string, unknown> | undefined) ?? {});
      return sendJson(reply, 200, body);
    },
  );
};
