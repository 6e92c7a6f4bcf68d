import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../../deps.js';
import { canonical, pickFormat, type TransformParams } from '../../../storage/images.js';
import { keyFromRequest } from './url.js';

const EXTENSION: Record<string, string> = {
  'image/webp': 'webp',
  'image/avif': 'avif',
  'image/jpeg': 'jpg',
  'image/png': 'png',
};

/**
 * Serves a rendition of an image object (`?width&height&resize&format&quality`): read access
 * as for the object itself; a signed `token` must have been issued for exactly this transform.
 * Renditions are whole answers (no Range); `If-None-Match` with the rendition's ETag is 304.
 */
export async function sendRendition(
  deps: Pick<Deps, 'storage' | 'images'>,
  request: FastifyRequest,
  reply: FastifyReply,
  req: { bucket: string; token?: string; transform: TransformParams },
) {
  const { storage, images } = deps;
  const transform = canonical(req.transform);
  const row = await storage.authorizeRead({
    bucket: req.bucket,
    key: keyFromRequest(request),
    identity: request.identity,
    token: req.token,
    transform: req.token === undefined ? undefined : transform,
  });
  const format = pickFormat(req.transform, request.headers.accept);
  const r = await images.render(row, req.transform, format, () => storage.openObject(row));
  const base = row.key
    .split('/')
    .pop()!
    .replace(/\.[^.]*$/, '')
    .replace(/[^\x20-\x7e]|["\\]/g, '_');
  reply.headers({
    'content-type': r.contentType,
    etag: `"${r.tag}"`,
    'last-modified': row.uploadedAt.toUTCString(),
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; sandbox",
    'content-disposition': `inline; filename="${base}.${EXTENSION[r.contentType] ?? 'img'}"`,
    'cache-control': req.token === undefined && row.isPublic ? 'no-cache' : 'private, no-store',
  });
  // Without `format` the answer depends on Accept: caches must keep them apart.
  if (req.transform.format === undefined) reply.header('vary', 'Origin, Accept');
  const inm = request.headers['if-none-match'];
  if (inm?.split(',').some((t) => t.trim().replace(/^W\//, '') === `"${r.tag}"`)) return reply.status(304).send();
  if (request.method === 'HEAD') return reply.header('content-length', r.bytes.length).send();
  return reply.send(r.bytes);
}
