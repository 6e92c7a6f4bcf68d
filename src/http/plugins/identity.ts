import type { FastifyInstance, FastifyRequest, onRequestHookHandler, preHandlerHookHandler } from 'fastify';
import { AppError } from '../../errors/index.js';
import type { Identity, IdentityResolver } from '../../auth/identity.js';
import type { Access } from '../types.js';

const FAILED = Symbol('identityError');
const RESOLVED = Symbol('identity');
type WithFailure = FastifyRequest & { [FAILED]?: AppError };

/**
 * Resolves the caller once per request (onRequest), so the rate limiter can key on it,
 * then enforces the route's declared access (preHandler). A bad credential is remembered
 * and answered with 401 after rate limiting, so guessing keys is rate limited too.
 * The hooks are attached per route from its declared access: 'open' routes (health,
 * function execution) get none at all.
 */
export function registerIdentity(app: FastifyInstance, resolver: IdentityResolver): void {
  // Requests to open routes and unknown paths read as "nobody" until a hook resolves them
  // (a getter rather than one more hook on every request).
  app.decorateRequest('identity', {
    getter(this: FastifyRequest & { [RESOLVED]?: Identity }) {
      return this[RESOLVED] ?? NONE;
    },
    setter(this: FastifyRequest & { [RESOLVED]?: Identity }, identity: Identity) {
      this[RESOLVED] = identity;
    },
  } as never);
  app.addHook('onRoute', (route) => {
    const access: Access = route.config?.access ?? 'admin';
    if (access === 'open') return;
    const deferSessionCheck = route.config?.handlerChecksSession === true;
    const ignoreEnded = access === 'public' && route.config?.ignoreEndedToken === true;
    if (deferSessionCheck) {
      // The session is checked in the handler's transaction; a request refused before it
      // gets there (unknown table, bad filter, bad body) checks it here first, so a
      // signed-out token is always answered 401, never with facts about the schema.
      route.errorHandler = async (error, request) => {
        throw await sessionFirst(resolver, request.identity, error);
      };
    }
    const resolve: onRequestHookHandler = (request, _reply, done) => {
      if (access === 'public' && !hasCredential(request)) return done();
      resolver.resolve(request.headers, { deferSessionCheck }).then(
        (identity) => {
          request.identity = identity;
          done();
        },
        (err) => {
          if (!(err instanceof AppError)) return done(err);
          if (ignoreEnded && err.code === 'AUTH_UNAUTHORIZED') return done();
          (request as WithFailure)[FAILED] = err;
          done();
        },
      );
    };
    const check: preHandlerHookHandler = (request, _reply, done) => {
      const failure = (request as WithFailure)[FAILED];
      if (failure) return done(failure);
      try {
        const config = request.routeOptions.config;
        enforce(access, request.identity, { functionToken: config.functionToken === true, hint: config.refusalHint });
        done();
      } catch (err) {
        done(err as Error);
      }
    };
    route.onRequest = [resolve, ...asArray(route.onRequest)];
    route.preHandler = [...asArray(route.preHandler), check];
  });
}

/**
 * What a route that checks the session in its handler (`handlerChecksSession`) answers for an
 * error: the error, unless it is not a 401 and the caller's session has ended (then that 401,
 * or the check's own failure). Its route error handler and the front lane's records reads use it.
 */
export async function sessionFirst(resolver: IdentityResolver, identity: Identity, error: unknown): Promise<unknown> {
  const status = error instanceof AppError ? error.status : (error as { statusCode?: number } | null)?.statusCode;
  if (status === 401) return error;
  try {
    await resolver.assertSessionLive(identity);
  } catch (err) {
    return err;
  }
  return error;
}

const NONE: Identity = Object.freeze({ kind: 'none' });

function asArray<T>(v: T | T[] | undefined): T[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

// Public routes still learn who calls when a credential is sent (e.g. sign-out, function calls).
function hasCredential(request: FastifyRequest): boolean {
  const h = request.headers;
  return h.authorization !== undefined || h.apikey !== undefined || h['x-api-key'] !== undefined;
}

/**
 * Refuses a caller the route's declared access does not let in (UNAUTHORIZED, FORBIDDEN);
 * `functionToken`: the route takes a function's token. Takes no Fastify request, so the front
 * lane (http/front-lane.ts) can check a route's access as Fastify's preHandler does.
 */
export function enforce(access: Access, identity: Identity, route: { functionToken: boolean; hint?: string }): void {
  const kind = identity.kind;
  const hint = route.hint;
  if (kind === 'function' && !route.functionToken) {
    throw new AppError('FORBIDDEN', {
      message: "A function's token is only taken by the routes made for functions (POST /api/email/send-raw).",
      nextActions: "Call this endpoint as the function's caller (forward their Authorization header) instead.",
    });
  }
  if (kind === 'function') return;
  if (access === 'open' || access === 'public' || kind === 'admin') return;
  if (kind === 'none') throw new AppError('UNAUTHORIZED');
  if (access === 'any') return;
  if (access === 'user' && kind === 'user') return;
  throw new AppError('FORBIDDEN', {
    message: access === 'admin' ? 'This endpoint is for admins only.' : 'This endpoint needs a signed-in user.',
    nextActions:
      hint ??
      (access === 'admin'
        ? 'Send the admin API key as "x-api-key: <key>".'
        : 'Sign in and send the access token as "Authorization: Bearer <token>".'),
  });
}
