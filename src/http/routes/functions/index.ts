import type { RoutePlugin } from '../../types.js';
import { functionAdminRoutes } from './admin.js';
import { functionInvokeRoutes } from './invoke.js';
import { secretRoutes } from './secrets.js';

/** Everything under /api/functions, /api/secrets and /functions. */
export const functionRoutes: RoutePlugin = async (app, opts) => {
  await app.register(functionAdminRoutes, opts);
  await app.register(secretRoutes, opts);
  await app.register(functionInvokeRoutes, opts);
};
