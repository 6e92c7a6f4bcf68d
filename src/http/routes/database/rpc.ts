import { Type } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoutePlugin } from '../../types.js';
import type { RecordsService } from '../../../database/records.js';
import { splitQuery } from '../../../database/query.js';
import { checkProfile } from '../../../database/prefer.js';

const FnParams = Type.Object({ fn: Type.String({ maxLength: 256 }) });
const Args = Type.Record(Type.String(), Type.Unknown());
const any = { access: 'any' as const, handlerChecksSession: true, postgrest: true };
const SUMMARY = 'Call public.<fn> as the caller: set-returning → array, scalar → value';

/** GET/HEAD: the arguments are the query parameters (`?a=1&arr={1,2}`), as text cast to the argument types. */
function queryArgs(request: FastifyRequest): Record<string, unknown> {
  const i = request.url.indexOf('?');
  const args: Record<string, unknown> = {};
  for (const [k, v] of splitQuery(i < 0 ? '' : request.url.slice(i + 1))) args[k] = v;
  return args;
}

async function call(records: RecordsService, request: FastifyRequest, reply: FastifyReply, source: 'query' | 'body') {
  checkProfile(request.headers);
  const fn = (request.params as { fn: string }).fn;
  const args = source === 'query' ? queryArgs(request) : ((request.body as Record<string, unknown> | undefined) ?? {});
  const body = await records.rpc(request.identity, fn, args, source);
  return reply.status(200).type('application/json; charset=utf-8').send(body);
}

/**
 * RPC on the spec's short path /api/db/rpc/{fn} and on /api/database/rpc/{fn} (where
 * @insforge/sdk and postgrest-js call): POST with a JSON object of named arguments, GET and
 * HEAD with the arguments in the query string. Functions of schema public only, run as the caller.
 */
export const rpcRoutes: RoutePlugin = async (app, { deps }) => {
  const { records } = deps;
  for (const url of ['/api/db/rpc/:fn', '/api/database/rpc/:fn']) {
    app.post(
      url,
      { config: any, schema: { tags: ['records'], summary: SUMMARY, params: FnParams, body: Type.Optional(Args), response: { 200: Type.Unknown() } } },
      (request, reply) => call(records, request, reply, 'body'),
    );
    app.get(
      url,
      { config: any, schema: { tags: ['records'], summary: `${SUMMARY}; arguments in the query string (HEAD too)`, params: FnParams, response: { 200: Type.Unknown() } } },
      (request, reply) => call(records, request, reply, 'query'),
    );
  }
};
