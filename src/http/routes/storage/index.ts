import type { RoutePlugin } from '../../types.js';
import { bucketRoutes } from './buckets.js';
import { objectRoutes } from './objects.js';
import { storageInsforgeRoutes } from './insforge.js';
import { resumableRoutes } from './resumable.js';

/** Storage: buckets (admin) and objects. */
export const storageRoutes: RoutePlugin = async (app, opts) => {
  await app.register(bucketRoutes, opts);
  await app.register(objectRoutes, opts);
  await app.register(storageInsforgeRoutes, opts);
  await app.register(resumableRoutes, opts);
};
