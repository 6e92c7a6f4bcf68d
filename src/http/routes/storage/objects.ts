import { Type, type Static, type TSchema } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../../errors/index.js';
import { assertValidKey, generateKey } from '../../../storage/keys.js';
import type { RoutePlugin } from '../../types.js';
import { drain, receiveFile } from './multipart.js';
import { sendRendition } from './images.js';
import { canonical, transformOf } from '../../../storage/images.js';
import {
  BucketParams,
  ConfirmBody,
  DownloadBody,
  DownloadStrategy,
  Message,
  ObjectParams,
  StorageObject,
  TransformFields,
  UploadStrategy,
  UploadStrategyBody,
} from './schemas.js';
import { baseUrl, keyFromRequest } from './url.js';
import { sendObject } from './send.js';

// Room for the multipart framing around a file of the maximum size.
const MULTIPART_OVERHEAD = 1024 * 1024;

const isMultipart = (request: FastifyRequest) => /^multipart\/form-data\b/i.test(request.headers['content-type'] ?? '');

/** Refuses a body whose declared length is over the limit before reading any of it. */
function assertDeclaredLength(request: FastifyRequest, max: number): void {
  const declared = Number(request.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > max + (isMultipart(request) ? MULTIPART_OVERHEAD : 0)) {
    throw new AppError('PAYLOAD_TOO_LARGE', { message: `The upload is larger than the limit of ${max} bytes.` });
  }
}

/** Runs an upload; on failure the rest of the body is drained so the error reaches the client. */
async function upload<T>(request: FastifyRequest, reply: FastifyReply, max: number, fn: () => Promise<T>): Promise<T> {
  try {
    assertDeclaredLength(request, max);
    return await fn();
  } catch (err) {
    await refuseBody(request, reply);
    throw err;
  }
}

/** Drains what is left of the body; if that is too much, the answer closes the connection. */
async function refuseBody(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (!(await drain(request.raw))) reply.header('connection', 'close');
}

/** The two upload routes, in their own scope: every body stays unread for the handler to stream. */
const uploadRoutes: RoutePlugin<'config' | 'storage'> = async (app, { deps }) => {
  const storage = deps.storage;
  const max = storage.maxUploadBytes;
  const tags = ['storage'];
  const base = (request: FastifyRequest) => baseUrl(request, deps.config);

  // Upload bodies are streamed by the handlers: these parsers leave the request unread, so
  // no body (JSON included) is buffered and BODY_LIMIT does not apply (MAX_UPLOAD_BYTES does).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));

  app.post(
    '/api/storage/buckets/:bucketName/objects',
    {
      config: { access: 'user' },
      schema: {
        tags,
        summary: 'Upload a file (multipart field "file"; optional text field "path", sent before it, gives the key)',
        consumes: ['multipart/form-data'],
        params: BucketParams,
        response: { 201: StorageObject },
      },
    },
    async (request, reply) => {
      const bucket = request.params.bucketName;
      if (!isMultipart(request)) {
        await refuseBody(request, reply);
        throw new AppError('UNSUPPORTED_MEDIA_TYPE', {
          message: 'Send the file as multipart/form-data in a field named "file".',
        });
      }
      let generated = false;
      const obj = await upload(request, reply, max, async () => {
        await storage.bucket(bucket);
        return receiveFile(
          request.raw,
          (file, info, fields) => {
            generated = fields.path === undefined;
            return storage.putObject({
              bucket,
              key: fields.path ?? generateKey(info.filename || 'file'),
              body: file,
              contentType: info.mimeType,
              identity: request.identity,
              base: base(request),
            });
          },
          // A generated key is new: remove the object again if the form broke after the file.
          async (o) => {
            if (generated) await storage.deleteObject({ bucket, key: o.key, identity: request.identity });
          },
        );
      });
      return reply.status(201).send(obj);
    },
  );

  app.put(
    '/api/storage/buckets/:bucketName/objects/*',
    {
      config: { access: 'user' },
      schema: {
        tags,
        summary: 'Create or replace the object at a key (multipart field "file", or the raw body)',
        consumes: ['multipart/form-data', 'application/octet-stream'],
        params: ObjectParams,
        response: { 200: StorageObject },
      },
    },
    async (request, reply) => {
      const bucket = request.params.bucketName;
      return upload(request, reply, max, async () => {
        const key = assertValidKey(keyFromRequest(request));
        if (!isMultipart(request)) {
          const length =
            request.headers['content-length'] === undefined ? undefined : Number(request.headers['content-length']);
          return storage.putObject({
            bucket,
            key,
            body: request.raw,
            length,
            contentType: request.headers['content-type'],
            identity: request.identity,
            base: base(request),
          });
        }
        await storage.bucket(bucket);
        return receiveFile(request.raw, (file, info) =>
          storage.putObject({
            bucket,
            key,
            body: file,
            contentType: info.mimeType,
            identity: request.identity,
            base: base(request),
          }),
        );
      });
    },
  );
};

/** Object upload, download, delete and the upload/download strategies. */
export const objectRoutes: RoutePlugin<'config' | 'storage' | 'images'> = async (app, { deps }) => {
  const storage = deps.storage;
  const tags = ['storage'];
  const base = (request: FastifyRequest) => baseUrl(request, deps.config);

  await app.register(uploadRoutes, { deps });

  const readRoute = {
    config: { access: 'public' as const },
    // HEAD is declared below: Fastify's automatic HEAD would read the whole object and drop it.
    exposeHeadRoute: false,
    schema: {
      tags,
      summary:
        'Download an object (Range supported); private objects need the uploader, an admin or ?token= from download-strategy',
      params: ObjectParams,
      querystring: Type.Object({ token: Type.Optional(Type.String({ maxLength: 128 })), ...TransformFields }),
    },
  };
  const read = async (
    request: FastifyRequest<{
      Params: Static<typeof ObjectParams>;
      Querystring: Static<typeof readRoute.schema.querystring>;
    }>,
    reply: FastifyReply,
  ) => {
    const { token, ...query } = request.query;
    const transform = transformOf(query);
    if (transform) return sendRendition(deps, request, reply, { bucket: request.params.bucketName, token, transform });
    return sendObject(storage, request, reply, request.params.bucketName, token);
  };
  app.get('/api/storage/buckets/:bucketName/objects/*', readRoute, read);
  app.head(
    '/api/storage/buckets/:bucketName/objects/*',
    { ...readRoute, schema: { ...readRoute.schema, summary: 'Headers of an object' } },
    read,
  );

  app.delete(
    '/api/storage/buckets/:bucketName/objects/*',
    {
      config: { access: 'user' },
      schema: { tags, summary: 'Delete an object', params: ObjectParams, response: { 200: Message } },
    },
    async (request) => {
      const key = keyFromRequest(request);
      await storage.deleteObject({ bucket: request.params.bucketName, key, identity: request.identity });
      return { message: `Object "${key}" deleted.` };
    },
  );

  app.post(
    '/api/storage/buckets/:bucketName/upload-strategy',
    {
      config: { access: 'user' },
      schema: {
        tags,
        summary: 'How to upload a file: direct PUT (local) or presigned POST (S3)',
        params: BucketParams,
        body: UploadStrategyBody,
        response: { 200: UploadStrategy },
      },
    },
    async (request) =>
      storage.transfers.uploadStrategy({
        bucket: request.params.bucketName,
        ...request.body,
        identity: request.identity,
        base: base(request),
      }),
  );

  // POST .../objects/{key}/confirm-upload and .../objects/{key}/download-strategy share one
  // wildcard route (a key may contain "/"); each validates its own body schema.
  app.post(
    '/api/storage/buckets/:bucketName/objects/*',
    {
      config: { access: 'public' },
      schema: {
        tags,
        summary:
          'POST .../objects/{key}/confirm-upload (body: size, contentType, etag) or .../objects/{key}/download-strategy (body: expiresIn)',
        params: ObjectParams,
        response: { 200: Type.Union([StorageObject, DownloadStrategy]) },
      },
    },
    async (request) => {
      const bucket = request.params.bucketName;
      const path = request.params['*'];
      // No body at all means the defaults; a JSON null or array is still checked (and refused).
      const body = request.body === undefined ? {} : request.body;
      if (path.endsWith('/confirm-upload')) {
        if (request.identity.kind === 'none') throw new AppError('UNAUTHORIZED');
        const input = check<Static<typeof ConfirmBody>>(request, ConfirmBody, body);
        return storage.transfers.confirmUpload({
          bucket,
          key: keyFromRequest(request, '/confirm-upload'),
          ...input,
          identity: request.identity,
          base: base(request),
        });
      }
      if (path.endsWith('/download-strategy')) {
        const input = check<Static<typeof DownloadBody>>(request, DownloadBody, body);
        const { expiresIn, ...query } = input;
        const transform = transformOf(query);
        return storage.transfers.downloadStrategy({
          bucket,
          key: keyFromRequest(request, '/download-strategy'),
          expiresIn,
          identity: request.identity,
          base: base(request),
          transform: transform ? canonical(transform) : undefined,
        });
      }
      throw new AppError('ROUTE_NOT_FOUND', {
        message: 'POST on an object path must end with /confirm-upload or /download-strategy; upload with PUT.',
      });
    },
  );
};

/** Validates (with the route's own Ajv: coercion, defaults) a body chosen by path suffix. */
function check<T>(request: FastifyRequest, schema: TSchema, body: unknown): T {
  const validate = request.compileValidationSchema(schema, 'body');
  // A copy for the defaults to fill in; only of a plain object (spreading an array gives {}).
  const copy = typeof body === 'object' && body !== null && !Array.isArray(body) ? { ...(body as object) } : body;
  if (!validate(copy)) {
    const e = validate.errors?.[0];
    throw new AppError('INVALID_INPUT', {
      message: `Invalid request: body${e?.instancePath ?? ''} ${e?.message ?? 'is not valid'}.`,
    });
  }
  return copy as T;
}
