import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Deps } from '../deps.js';
import type { Identity } from '../auth/identity.js';

/**
 * Who may call a route, declared as `config: { access }`:
 * - open:   credential headers are not read at all (health, function execution passes them on)
 * - public: no credential needed (a present but bad credential is still a 401)
 * - any:    anon key, user token or admin
 * - user:   user token or admin
 * - admin:  admin only (the default when a route declares nothing)
 */
export type Access = 'open' | 'public' | 'any' | 'user' | 'admin';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
    /** `false`: the route is not rate-limited (plugins/rate-limit.ts; health, metrics, the dashboard's files). */
    rateLimit?: false;
    /**
     * The handler checks a user token's session itself, in a query it runs anyway (records:
     * withCaller; GET /api/auth/user: the user read), so the identity hook skips that lookup.
     */
    handlerChecksSession?: boolean;
    /** A database route: error bodies add PostgREST's `code`, `details` and `hint` (postgrest-js reads them). */
    postgrest?: boolean;
    /**
     * On a 'public' route, a user token that has expired or whose session ended counts as no
     * credential instead of a 401 (sign-in and the emailed-code flows: the InsForge SDK sends
     * its last token along, and must still be able to sign in). A forged token or a wrong key
     * is still refused.
     */
    ignoreEndedToken?: boolean;
    /** An empty body sent as application/json reads as no body instead of a 400 (clients that send the header anyway). */
    emptyJsonBody?: boolean;
    /**
     * The route also takes a function's own token (x-plinth-function-token, role "function");
     * every other route refuses it with a 403.
     */
    functionToken?: boolean;
    /** What a caller refused by `access` should do instead, when the general advice misleads. */
    refusalHint?: string;
  }
  interface FastifyRequest {
    identity: Identity;
  }
}

/**
 * Every route module is a plugin of this type, registered by app.ts with the deps; `K` names
 * the services it uses (`RoutePlugin<'records' | 'config'>`), so a route sees only those.
 */
export type RoutePlugin<K extends keyof Deps = keyof Deps> = FastifyPluginAsync<
  { deps: Pick<Deps, K> },
  import('node:http').Server,
  TypeBoxTypeProvider
>;
