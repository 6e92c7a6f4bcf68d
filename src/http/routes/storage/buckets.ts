import { Type } from '@fastify/type-provider-typebox';
import type { RoutePlugin } from '../../types.js';
import { BucketName, BucketParams, StorageObject } from './schemas.js';
import { baseUrl } from './url.js';

/** Bucket administration and object listing (admin), and the listing of what a caller may read. */
export const bucketRoutes: RoutePlugin<'config' | 'storage'> = async (app, { deps }) => {
  const storage = deps.storage;
  const tags = ['storage'];

  app.get(
    '/api/storage/buckets',
    {
      config: { access: 'admin' },
      schema: {
        tags,
        summary: 'List bucket names',
        response: { 200: Type.Object({ buckets: Type.Array(Type.String()) }) },
      },
    },
    async () => ({ buckets: await storage.listBuckets() }),
  );

  app.post(
    '/api/storage/buckets',
    {
      config: { access: 'admin' },
      schema: {
        tags,
        summary: 'Create a bucket (public unless isPublic is false)',
        body: Type.Object({ bucketName: BucketName, isPublic: Type.Boolean({ default: true }) }),
        response: { 201: Type.Object({ message: Type.String(), bucket: Type.String(), isPublic: Type.Boolean() }) },
      },
    },
    async (request, reply) => {
      const b = await storage.createBucket(request.body.bucketName, request.body.isPublic);
      return reply.status(201).send({ message: `Bucket "${b.name}" created.`, bucket: b.name, isPublic: b.isPublic });
    },
  );

  app.get(
    '/api/storage/buckets/:bucketName',
    {
      config: { access: 'admin' },
      schema: {
        tags,
        summary: 'One bucket and its visibility',
        params: BucketParams,
        response: { 200: Type.Object({ bucket: Type.String(), isPublic: Type.Boolean() }) },
      },
    },
    async (request) => {
      const b = await storage.bucket(request.params.bucketName);
      return { bucket: b.name, isPublic: b.isPublic };
    },
  );

  app.patch(
    '/api/storage/buckets/:bucketName',
    {
      config: { access: 'admin' },
      schema: {
        tags,
        summary: 'Make a bucket public or private',
        params: BucketParams,
        body: Type.Object({ isPublic: Type.Boolean() }),
        response: { 200: Type.Object({ message: Type.String(), bucket: Type.String(), isPublic: Type.Boolean() }) },
      },
    },
    async (request) => {
      const b = await storage.setBucketPublic(request.params.bucketName, request.body.isPublic);
      return {
        message: `Bucket "${b.name}" is now ${b.isPublic ? 'public' : 'private'}.`,
        bucket: b.name,
        isPublic: b.isPublic,
      };
    },
  );

  app.delete(
    '/api/storage/buckets/:bucketName',
    {
      config: { access: 'admin' },
      schema: {
        tags,
        summary: 'Delete a bucket and all its objects',
        params: BucketParams,
        response: { 200: Type.Object({ message: Type.String(), nextActions: Type.String() }) },
      },
    },
    async (request) => {
      const name = request.params.bucketName;
      await storage.deleteBucket(name);
      return {
        message: `Bucket "${name}" and all its objects were deleted.`,
        nextActions: 'Create it again with POST /api/storage/buckets if you still need it.',
      };
    },
  );

  app.get(
    '/api/storage/buckets/:bucketName/objects',
    {
      config: {
        access: 'admin',
        refusalHint:
          'Listing every object is for admins (x-api-key). To list the objects you may read, use GET /api/storage/buckets/{bucketName}/list with the same query.',
      },
      schema: {
        tags,
        summary: 'List objects by key (prefix, search, limit, offset)',
        params: BucketParams,
        querystring: ListQuery,
        response: { 200: ListAnswer },
      },
    },
    async (request) => {
      const { prefix, search, limit, offset } = request.query;
      const { data, total } = await storage.listObjects(
        request.params.bucketName,
        { prefix, search, limit, offset },
        baseUrl(request, deps.config),
      );
      return { data, objects: data, pagination: { offset, limit, total } };
    },
  );

  app.get(
    '/api/storage/buckets/:bucketName/list',
    {
      config: { access: 'public' },
      schema: {
        tags,
        summary:
          'List the objects the caller may read (public bucket: all; private: their own, all for admins), by key',
        params: BucketParams,
        querystring: ListQuery,
        response: { 200: ListAnswer },
      },
    },
    async (request) => {
      const { prefix, search, limit, offset } = request.query;
      const q = { prefix, search, limit, offset };
      const { data, total } = await storage.listReadable(
        request.identity,
        request.params.bucketName,
        q,
        baseUrl(request, deps.config),
      );
      return { data, objects: data, pagination: { offset, limit, total } };
    },
  );
};

const ListQuery = Type.Object({
  prefix: Type.Optional(Type.String({ maxLength: 1024 })),
  search: Type.Optional(Type.String({ maxLength: 1024 })),
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
  offset: Type.Integer({ minimum: 0, default: 0 }),
});

const ListAnswer = Type.Object({
  data: Type.Array(StorageObject),
  objects: Type.Array(StorageObject, { description: 'The same list as data, under the key the InsForge SDK reads.' }),
  pagination: Type.Object({ offset: Type.Integer(), limit: Type.Integer(), total: Type.Integer() }),
});
