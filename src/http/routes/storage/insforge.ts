import { Type } from '@fastify/type-provider-typebox';
import type { RoutePlugin } from '../../types.js';
import { canonical, transformOf } from '../../../storage/images.js';
import { BucketParams, DownloadBody, DownloadStrategy, ObjectParams } from './schemas.js';
import { baseUrl, keyFromDownloadStrategyPath } from './url.js';

const tags = ['storage'];

/**
 * The storage paths of the InsForge SDK (`@insforge/sdk`), beside the spec's own: the download
 * strategy as a GET (the SDK tries it before the spec's POST) and the batch delete of
 * `remove([...keys])`. Access is the same as on the spec's paths.
 */
export const storageInsforgeRoutes: RoutePlugin<'config' | 'storage'> = async (app, { deps }) => {
  const storage = deps.storage;

  app.get(
    '/api/storage/buckets/:bucketName/download-strategy/objects/*',
    {
      config: { access: 'public' },
      schema: {
        tags,
        summary:
          'How to download an object (GET form of POST .../objects/{key}/download-strategy); the url is absolute',
        params: ObjectParams,
        querystring: DownloadBody,
        response: { 200: DownloadStrategy },
      },
    },
    async (request) => {
      const { expiresIn, ...query } = request.query;
      const transform = transformOf(query);
      return storage.transfers.downloadStrategy({
        bucket: request.params.bucketName,
        key: keyFromDownloadStrategyPath(request),
        expiresIn,
        identity: request.identity,
        base: baseUrl(request, deps.config),
        transform: transform ? canonical(transform) : undefined,
      });
    },
  );

  app.delete(
    '/api/storage/buckets/:bucketName/objects',
    {
      config: { access: 'user' },
      schema: {
        tags,
        summary: 'Delete several objects: body {keys: [...]} (1 to 1000); one invalid key refuses them all',
        description: 'Each key is then deleted on its own; results say deleted, notFound, or failed with the reason.',
        params: BucketParams,
        body: Type.Object({ keys: Type.Array(Type.String(), { minItems: 1, maxItems: 1000 }) }),
        response: {
          200: Type.Object({
            results: Type.Array(
              Type.Object({
                key: Type.String(),
                status: Type.Union([Type.Literal('deleted'), Type.Literal('notFound'), Type.Literal('failed')]),
                message: Type.Optional(Type.String()),
              }),
            ),
          }),
        },
      },
    },
    async (request) => ({
      results: await storage.deleteObjects({
        bucket: request.params.bucketName,
        keys: request.body.keys,
        identity: request.identity,
      }),
    }),
  );
};
