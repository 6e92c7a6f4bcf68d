import type { IncomingHttpHeaders } from 'node:http';
import { Type } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Identity, IdentityResolver } from '../../../auth/identity.js';
import type { FunctionService } from '../../../functions/service.js';
import type { RoutePlugin } from '../../types.js';
import { publicOrigin } from '../../origin.js';

const tags = ['functions'];
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
const Slug = Type.String({ description: 'The function slug' });

/** Headers the server sets to tell a function who called; never taken from the client. */
const IDENTITY_PREFIX = 'x-plinth-';
/**
 * The admin API key never reaches a function, in whichever header it came: a function would
 * hold the root credential (every secret, every row). x-plinth-role says an admin called. A
 * user's access token and the anon key (public) still pass, so a function can call the API
 * as its caller.
 */
const CREDENTIAL_HEADERS = new Set(['authorization', 'apikey', 'x-api-key']);
const ADMIN_KEY = /^\s*(?:Bearer\s+)?ik_/i;

/** The caller of an open call that sent no credential at all. */
const ANON: Identity = Object.freeze({ kind: 'none' });

function forwarded(name: string, value: string | string[] | undefined): boolean {
  if (name.startsWith(IDENTITY_PREFIX)) return false;
  return !CREDENTIAL_HEADERS.has(name) || !ADMIN_KEY.test(String(value));
}

function hasBody(request: FastifyRequest): boolean {
  if (request.method === 'GET' || request.method === 'HEAD') return false;
  const h = request.headers;
  return h['transfer-encoding'] !== undefined || (h['content-length'] !== undefined && h['content-length'] !== '0');
}

function identityHeaders(identity: Identity): Record<string, string> {
  switch (identity.kind) {
    case 'admin':
      return { 'x-plinth-role': 'admin' };
    case 'user':
      return {
        'x-plinth-role': 'authenticated',
        'x-plinth-user-id': identity.userId,
        'x-plinth-user-email': identity.email,
      };
    default:
      // The anon key, or no credential at all (only on /functions/{slug}).
      return { 'x-plinth-role': 'anon' };
  }
}

/**
 * Whether a credential value is Plinth's: an admin key (`ik_…`), the anon key (`anon_…`), or a
 * JWT that says Plinth issued it (`iss: "plinth"`, read before any check). Anything else is
 * someone else's token (a webhook's, another identity provider's) and not Plinth's to judge.
 */
function isPlinthCredential(value: string): boolean {
  if (value.startsWith('ik_') || value.startsWith('anon_')) return true;
  const payload = value.split('.')[1];
  if (value.split('.').length !== 3 || !payload) return false;
  try {
    return (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { iss?: unknown }).iss === 'plinth';
  } catch {
    return false;
  }
}

/**
 * The caller of /functions/{slug}. A Plinth credential sent along (the InsForge SDK's
 * `Authorization: Bearer <user token | anon key>`, or `apikey` / `x-api-key`) is resolved like
 * everywhere, and a wrong one is a 401. Headers that carry someone else's credential (another
 * scheme, a foreign token) are not Plinth's: they pass through untouched and the caller is anon.
 */
async function openCaller(resolver: IdentityResolver, headers: IncomingHttpHeaders): Promise<Identity> {
  if (headers.authorization === undefined && headers.apikey === undefined && headers['x-api-key'] === undefined) {
    return ANON;
  }
  const ours = (v: string | string[] | undefined, strip = false) => {
    if (typeof v !== 'string') return undefined;
    const value = strip ? /^Bearer\s+(\S+)\s*$/i.exec(v)?.[1] : v.trim();
    return value !== undefined && isPlinthCredential(value) ? v : undefined;
  };
  return resolver.resolve({
    authorization: ours(headers.authorization, true),
    apikey: ours(headers.apikey),
    'x-api-key': ours(headers['x-api-key']),
  });
}

async function run(
  fns: FunctionService,
  publicUrl: string | null,
  request: FastifyRequest,
  reply: FastifyReply,
  slug: string,
  identity: Identity,
): Promise<FastifyReply> {
  const headers: IncomingHttpHeaders = {};
  const given = request.headers;
  for (const k in given) if (forwarded(k, given[k])) headers[k] = given[k];
  Object.assign(headers, identityHeaders(identity));
  const base = publicOrigin(request, publicUrl);
  const res = await fns.invoke(slug, {
    method: request.method,
    url: base + request.url,
    headers,
    // The body is streamed to the function as it arrives, never buffered here.
    body: hasBody(request) ? request.raw : null,
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
