import { Type } from 'typebox';
import { tool } from '../types.js';
import { table } from '../format.js';
import { BucketName } from '../../storage/schemas.js';

const Bucket = BucketName; // the routes' (storage/schemas.ts)
const ADMIN = { kind: 'admin' } as const;

/** Buckets and objects: the storage service behind /api/storage/buckets. */
export const storageTools = [
  tool<Record<string, never>>({
    name: 'list-buckets',
    description: 'List the storage buckets.',
    input: Type.Object({}),
    readOnly: true,
    run: async (_a, ctx) => {
      const names = await ctx.services.storage.listBuckets();
      return names.length ? names.join('\n') : '(no buckets: create one with create-bucket)';
    },
  }),
  tool<{ bucketName: string; isPublic: boolean }>({
    name: 'create-bucket',
    description:
      'Create a storage bucket, PRIVATE unless isPublic is true: private objects are read by their uploader and admins (signed URLs for others); ' +
      'public ones by anyone with the URL, no key needed (only for assets meant for everyone, never user files).',
    input: Type.Object({
      bucketName: Bucket,
      isPublic: Type.Boolean({
        default: false,
        description: 'false (the default): private. true: anyone with an object URL can download it.',
      }),
    }),
    readOnly: false,
    run: async ({ bucketName, isPublic }, ctx) => {
      const b = await ctx.services.storage.createBucket(bucketName, isPublic);
      return `Bucket "${b.name}" created (${b.isPublic ? 'public' : 'private'}).`;
    },
  }),
  tool<{ bucketName: string }>({
    name: 'delete-bucket',
    description: 'Delete a bucket and every object in it. Cannot be undone.',
    input: Type.Object({ bucketName: Bucket }),
    readOnly: false,
    destructive: true,
    run: async ({ bucketName }, ctx) => {
      await ctx.services.storage.deleteBucket(bucketName);
      return `Bucket "${bucketName}" and its objects were deleted.`;
    },
  }),
  tool<{ bucketName: string; prefix?: string; limit: number; offset: number }>({
    name: 'list-objects',
    description: 'List objects of a bucket by key (optional key prefix), paged.',
    input: Type.Object({
      bucketName: Bucket,
      prefix: Type.Optional(Type.String({ maxLength: 1024 })),
      limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
      offset: Type.Integer({ minimum: 0, default: 0 }),
    }),
    readOnly: true,
    run: async (a, ctx) => {
      const { data, total } = await ctx.services.storage.listObjects(
        a.bucketName,
        { prefix: a.prefix, limit: a.limit, offset: a.offset },
        ctx.baseUrl,
      );
      return table(
        data.map((o) => ({ key: o.key, size: o.size, mimeType: o.mimeType, uploadedAt: o.uploadedAt })),
        { offset: a.offset, limit: a.limit, total },
      );
    },
  }),
  tool<{ bucketName: string; key: string; expiresIn: number }>({
    name: 'get-object-url',
    description:
      'A URL to download one object: the plain URL in a public bucket, a signed URL that expires (expiresIn seconds) in a private one.',
    input: Type.Object({
      bucketName: Bucket,
      key: Type.String({ minLength: 1, maxLength: 1024 }),
      expiresIn: Type.Integer({ minimum: 1, maximum: 604_800, default: 3600 }),
    }),
    readOnly: true,
    run: async (a, ctx) => {
      const s = await ctx.services.storage.transfers.downloadStrategy({
        bucket: a.bucketName,
        key: a.key,
        expiresIn: a.expiresIn,
        identity: ADMIN,
        base: ctx.baseUrl,
      });
      return s.expiresAt ? `${s.url}\n(expires ${s.expiresAt})` : s.url;
    },
  }),
];
