import type { FastifyRequest } from 'fastify';
import type { Config } from '../../../config/index.js';
import { AppError } from '../../../errors/index.js';
import { decodeKeyFromPath } from '../../../storage/keys.js';
import { publicOrigin } from '../../origin.js';

/** The absolute base of URLs handed to clients: PUBLIC_URL, else this request's origin. */
export function baseUrl(request: FastifyRequest, config: Readonly<Config>): string {
  return publicOrigin(request, config.publicUrl);
}

const OBJECTS_PATH = /^\/api\/storage\/buckets\/[^/]+\/objects\/(.*)$/;
const DOWNLOAD_STRATEGY_PATH = /^\/api\/storage\/buckets\/[^/]+\/download-strategy\/objects\/(.*)$/;

/**
 * The object key of a wildcard route, read from the raw path (the router would drop a
 * trailing "/"): raw "/" and "%2F" both separate segments. `suffix` (e.g. "/confirm-upload")
 * is cut off first when given.
 */
export function keyFromRequest(request: FastifyRequest, suffix = '', pattern = OBJECTS_PATH): string {
  const path = request.raw.url!.split('?')[0]!;
  const m = pattern.exec(path);
  if (!m) throw new AppError('INVALID_KEY', { message: 'The path has no object key.' });
  const raw = suffix ? m[1]!.slice(0, -suffix.length) : m[1]!;
  return decodeKeyFromPath(raw);
}

/** The object key of GET .../buckets/{b}/download-strategy/objects/{key} (the InsForge SDK's path). */
export const keyFromDownloadStrategyPath = (request: FastifyRequest) =>
  keyFromRequest(request, '', DOWNLOAD_STRATEGY_PATH);
