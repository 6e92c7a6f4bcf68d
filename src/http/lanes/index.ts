import type { Deps } from '../../deps.js';
import type { LaneHandler } from '../front-lane.js';
import type { RateLimiter } from '../limiter.js';
import { FunctionLane } from './functions.js';
import { RecordsLane } from './records.js';
import { StorageLane } from './storage.js';

/**
 * The front lane's handlers (http/front-lane.ts `LaneHandler`), tried in this order for every
 * request that is not an exact lane route. Each answers only what it can answer exactly as
 * Fastify would, and leaves the rest to Fastify.
 */
export function laneHandlers(deps: Deps, limiter: RateLimiter | null): LaneHandler[] {
  return [
    new RecordsLane(deps.records, deps.identity, limiter),
    new StorageLane({ storage: deps.storage, identity: deps.identity, publicUrl: deps.config.publicUrl }, limiter),
    new FunctionLane({ functions: deps.functions, identity: deps.identity, publicUrl: deps.config.publicUrl }, limiter),
  ];
}
