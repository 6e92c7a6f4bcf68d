import { Type } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Identity } from '../../../auth/identity.js';
import type { FunctionService } from '../../../functions/service.js';
import type { RoutePlugin } from '../../types.js';
import { publicOrigin } from '../../origin.js';
import { callHeaders, hasBody, openCaller } from '../../function-call.js';
import { keepClientAddress } from '../../plugins/observe.js';

const tags = ['functions'];
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
const Slug = Type.String({ description: 'The function slug' });

async function run(
  fns: FunctionService,
  publicUrl: string | null,
  request: FastifyRequest,
  reply: FastifyReply,
  slug: string,
  identity: Identity,
): Promise<FastifyReply> {
  const base = publicOrigin(request, publicUrl);
  keepClientAddress(request);
  const res = await fns.invoke(slug, {
    method: request.method,
    url: base + request.url,
    headers: callHeaders(request.headers, identity),
    // The body is streamed to the function as it arrives, never buffered here.
    body: hasBody(request.method, request.headers) ? request.raw : null,
  });
  return reply.status(res.status).headers(res.headers).send(res.body);
}

/**
 * Function execution. /functions/{slug} (and sub-paths) needs no credential and hands the
 * request to the function unchanged; POST /api/functions/{slug} needs one. Both tell the
 * function who called in x-plinth-role, x-plinth-user-id and x-plinth-user-email.
 */
export const functionInvokeRoutes: RoutePlugin<'config' | 'functions' | 'identity'> = async (app, { deps }) => {
  const fns = deps.functions;
  const publicUrl = deps.config.publicUrl;
  // Any body of any content type passes through raw: no parser reads it here.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
  // Functions call this Plinth through the runtime's bridge, which relays to where it listens.
  app.addHook('onListen', async () => {
    const address = app.server.address();
    if (address) fns.runtime.listening?.(address);
  });

  // Identity is resolved in the handler (openCaller), not by the identity plugin: a header that
  // is not a Plinth credential must pass through to the function rather than be refused.
  const open = { config: { access: 'open' as const } };
  const runOpen = async (request: FastifyRequest, reply: FastifyReply) =>
    run(
      fns,
      publicUrl,
      request,
      reply,
      (request.params as { slug: string }).slug,
      await openCaller(deps.identity, request.headers),
    );
  app.route({
    method: [...METHODS],
    url: '/functions/:slug',
    ...open,
    schema: {
      tags,
      summary: 'Run a function: method, query, headers and body pass through; the function answers',
      description:
        'A Plinth credential sent along (Bearer token, anon or admin key) is checked and named in x-plinth-role, x-plinth-user-id, x-plinth-user-email; none means anon.',
      params: Type.Object({ slug: Slug }),
    },
    handler: runOpen,
  });
  app.route({
    method: [...METHODS],
    url: '/functions/:slug/*',
    ...open,
    schema: { tags, summary: 'Run a function on a sub-path', params: Type.Object({ slug: Slug, '*': Type.String() }) },
    handler: runOpen,
  });
  app.post(
    '/api/functions/:slug',
    {
      config: { access: 'any' },
      schema: {
        tags,
        summary: 'Run a function as the caller (x-plinth-role, x-plinth-user-id, x-plinth-user-email)',
        params: Type.Object({ slug: Slug }),
      },
    },
    (request, reply) => run(fns, publicUrl, request, reply, request.params.slug, request.identity),
  );
};
