// Serving an object's bytes: conditional requests, ranges, inline or attachment, renditions.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../../errors/index.js';
import { servedInline } from '../../../storage/keys.js';
import { parseRange } from '../../../storage/range.js';
import type { StorageService } from '../../../storage/service.js';
import { keyFromRequest } from './url.js';

function contentDisposition(key: string, contentType: string): string {
  const name = key.split('/').pop()!;
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `${servedInline(contentType) ? 'inline' : 'attachment'}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

const notModified = (inm: string | undefined, etag: string | null) =>
  !!etag && !!inm && inm.split(',').some((t) => t.trim().replace(/^W\//, '') === `"${etag}"`);

/**
 * Serves an object. Length, range and ETag come from what the driver holds now (its read or
 * head), never from the recorded metadata: the bytes may have changed since (a presigned POST
 * form stays valid until it expires), and a body longer than its declared Content-Length would
 * be read by the client as the next response on the connection.
 */
export async function sendObject(
  storage: StorageService,
  request: FastifyRequest,
  reply: FastifyReply,
  bucket: string,
  token?: string,
) {
  const row = await storage.authorizeRead({ bucket, key: keyFromRequest(request), identity: request.identity, token });
  reply.headers({
    'content-type': row.mimeType,
    'accept-ranges': 'bytes',
    'last-modified': row.uploadedAt.toUTCString(),
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; sandbox",
    'content-disposition': contentDisposition(row.key, row.mimeType),
    'cache-control': token === undefined && row.isPublic ? 'no-cache' : 'private, no-store',
  });
  const bytes = await storage.smallObject(row);
  if (bytes) return sendBytes(request, reply, bytes, row.etag);
  // Range is defined for GET only (RFC 9110 14.2): HEAD describes the whole object.
  const range = request.method === 'GET' ? parseRange(request.headers.range, row.size) : null;
  const inm = request.headers['if-none-match'];
  if (request.method === 'HEAD' || inm || range === 'unsatisfiable') {
    // Answers that carry no bytes need only the head (a stat, or an S3 HEAD).
    const head = await storage.headObject(row);
    const etag = head.etag ?? row.etag;
    if (etag) reply.header('etag', `"${etag}"`);
    if (notModified(inm, etag)) return reply.status(304).send();
    if (range === 'unsatisfiable') {
      throw new AppError('RANGE_NOT_SATISFIABLE', { headers: { 'content-range': `bytes */${head.size}` } });
    }
    if (request.method === 'HEAD') return reply.header('content-length', head.size).send();
  }
  const read = await storage.openObject(row, range ?? undefined);
  const etag = read.etag ?? row.etag;
  if (etag) reply.header('etag', `"${etag}"`);
  if (read.range) {
    reply.status(206).header('content-range', `bytes ${read.range.start}-${read.range.end}/${read.size}`);
    reply.header('content-length', read.range.end - read.range.start + 1);
  } else {
    reply.header('content-length', read.size);
  }
  return reply.send(read.body);
}

/** Serves a small object held in memory whole (see sendObject for what each answer means). */
function sendBytes(request: FastifyRequest, reply: FastifyReply, bytes: Buffer, etag: string | null) {
  if (etag) reply.header('etag', `"${etag}"`);
  if (notModified(request.headers['if-none-match'], etag)) return reply.status(304).send();
  if (request.method === 'HEAD') return reply.header('content-length', bytes.length).send();
  const range = parseRange(request.headers.range, bytes.length);
  if (range === 'unsatisfiable') {
    throw new AppError('RANGE_NOT_SATISFIABLE', { headers: { 'content-range': `bytes */${bytes.length}` } });
  }
  if (!range) return reply.send(bytes);
  reply.status(206).header('content-range', `bytes ${range.start}-${range.end}/${bytes.length}`);
  return reply.send(bytes.subarray(range.start, range.end + 1));
}
