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
    /**
     * The handler runs every database access through withCaller, which checks a user
     * token's session in its own transaction: the identity hook then skips that lookup.
     */
    sessionCheckInTransaction?: boolean;
  }
  interface FastifyRequest {
    identity: Identity;
  }
}

/** Every route module is a plugin of this type, registered by app.ts with the deps. */
export type RoutePlugin = FastifyPluginAsync<{ deps: Deps }, import('node:http').Server, TypeBoxTypeProvider>;
