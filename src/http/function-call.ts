import type { IncomingHttpHeaders } from 'node:http';
import type { Identity, IdentityResolver } from '../auth/identity.js';

/**
 * What a call of a function takes from its HTTP request, whichever answers it: Fastify's
 * routes (http/routes/functions/invoke.ts) and the front lane (http/lanes/functions.ts).
 */

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

/** Whether the request carries a body to stream to the function. */
export function hasBody(method: string | undefined, h: IncomingHttpHeaders): boolean {
  if (method === 'GET' || method === 'HEAD') return false;
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
 * The headers a function is called with: the client's, without `x-plinth-*` and without the
 * admin key, and the caller's identity in `x-plinth-role`, `-user-id`, `-user-email`.
 */
export function callHeaders(given: IncomingHttpHeaders, identity: Identity): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = {};
  for (const k in given) if (forwarded(k, given[k])) headers[k] = given[k];
  return Object.assign(headers, identityHeaders(identity));
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
export async function openCaller(resolver: IdentityResolver, headers: IncomingHttpHeaders): Promise<Identity> {
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
