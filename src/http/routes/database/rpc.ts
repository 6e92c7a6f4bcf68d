import { Type } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoutePlugin } from '../../types.js';
import type { RecordsService } from '../../../database/records.js';
import type { BodyKind } from '../../../database/rpc.js';
import { parseAccept } from '../../../database/media.js';
import { profile } from './records.js';
import { contentRange, parsePrefer, parseRange, preferenceApplied } from '../../../database/prefer.js';

const FnParams = Type.Object({ fn: Type.String({ maxLength: 256 }) });
const any = { access: 'any' as const, handlerChecksSession: true, postgrest: true };
const SUMMARY =
  'Call public.<fn> as the caller: a result of rows is a relation (select, filters, order, limit/offset, Range), a scalar its value, void 204';

function rawQuery(request: FastifyRequest): string {
  const i = request.url.indexOf('?');
  return i < 0 ? '' : request.url.slice(i + 1);
}

/** The kind of a POST body by its Content-Type (text/plain, octet-stream; else JSON). */
function bodyKind(request: FastifyRequest): BodyKind {
  const type = request.headers['content-type'] ?? '';
  return /^text\/plain\b/i.test(type) ? 'text' : /^application\/octet-stream\b/i.test(type) ? 'bytes' : 'json';
}

/** GET/HEAD: arguments are the query parameters named like the function's arguments; POST: the JSON body. */
async function call(records: RecordsService, request: FastifyRequest, reply: FastifyReply, source: 'query' | 'body') {
  const schema = profile(records, reply, request, source === 'body');
  const prefer = parsePrefer(request.headers.prefer);
  const unit = request.headers['range-unit'];
  const range = parseRange(request.headers.range, Array.isArray(unit) ? unit[0] : unit);
  const media = parseAccept(request.headers.accept);
  const single = media.single;
  const result = await records.rpc(
    request.identity,
    {
      name: (request.params as { fn: string }).fn,
      rawQuery: rawQuery(request),
      body: source === 'body' ? (request.body ?? {}) : undefined,
      bodyKind: bodyKind(request),
      range,
      format: media.format,
      schema,
      plan: media.plan,
    },
    { single, rollback: prefer.rollback, maxAffected: prefer.maxAffected },
  );
  const applied = preferenceApplied({ ...prefer, return: null, missingDefault: false, resolution: null });
  if (applied) reply.header('Preference-Applied', applied);
  if (result.kind === 'plan') return reply.status(200).type(media.contentType).send(result.body);
  if (result.kind === 'void') return reply.status(204).send();
  if (result.kind === 'rows') reply.header('Content-Range', contentRange(result.offset, result.count, result.total));
  // One value or object is a relation of one row (PostgREST: `0-0/1` when counted).
  else if (prefer.count !== null) reply.header('Content-Range', contentRange(0, 1, 1));
  const type = result.kind === 'rows' || single ? media.contentType : 'application/json; charset=utf-8';
  const partial =
    result.kind === 'rows' &&
    prefer.count !== null &&
    result.count < result.total &&
    request.url.startsWith('/api/db/');
  return reply
    .status(partial ? 206 : 200)
    .type(type)
    .send(result.body);
}

/**
 * RPC on the spec's short path /api/db/rpc/{fn} and on /api/database/rpc/{fn} (where
 * @insforge/sdk and postgrest-js call): POST with a JSON object of named arguments (or any JSON
 * for one unnamed json/jsonb argument), GET and HEAD with the arguments in the query string.
 * Functions of schema public only, run as the caller.
 */
export const rpcRoutes: RoutePlugin<'records'> = async (app, { deps }) => {
  const { records } = deps;
  // A function with one unnamed text or bytea parameter takes the raw body (this plugin only).
  app.addContentTypeParser(['text/plain', 'application/octet-stream'], { parseAs: 'buffer' }, (_req, body, done) =>
    done(null, body),
  );
  for (const url of ['/api/db/rpc/:fn', '/api/database/rpc/:fn']) {
    app.post(
      url,
      {
        config: any,
        schema: {
          tags: ['records'],
          summary: SUMMARY,
          params: FnParams,
          body: Type.Optional(Type.Unknown()),
          response: { 200: Type.Unknown(), 204: Type.Null() },
        },
      },
      (request, reply) => call(records, request, reply, 'body'),
    );
    app.get(
      url,
      {
        config: any,
        schema: {
          tags: ['records'],
          summary: `${SUMMARY}; arguments in the query string (HEAD too)`,
          params: FnParams,
          response: { 200: Type.Unknown(), 204: Type.Null() },
        },
      },
      (request, reply) => call(records, request, reply, 'query'),
    );
  }
};
