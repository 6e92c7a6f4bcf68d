import type { RoutePlugin } from '../../types.js';
import { authSessionRoutes } from './session.js';
import { authEmailRoutes } from './email.js';
import { authAdminRoutes } from './admin.js';
import { authInsforgeRoutes } from './insforge.js';
import { authMfaRoutes } from './mfa.js';
import { authPasswordlessRoutes } from './passwordless.js';

/** Everything under /api/auth. */
export const authRoutes: RoutePlugin = async (app, opts) => {
  await app.register(authSessionRoutes, opts);
  await app.register(authEmailRoutes, opts);
  await app.register(authAdminRoutes, opts);
  await app.register(authInsforgeRoutes, opts);
  await app.register(authMfaRoutes, opts);
  await app.register(authPasswordlessRoutes, opts);
};
