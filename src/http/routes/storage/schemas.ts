import { Type } from '@fastify/type-provider-typebox';
import { MAX_DIMENSION } from '../../../storage/images.js';
import { BucketName } from '../../../storage/schemas.js';

export { BucketName } from '../../../storage/schemas.js';
export const BucketParams = Type.Object({ bucketName: BucketName });
export const ObjectParams = Type.Object({ bucketName: BucketName, '*': Type.String() });

export const StorageObject = Type.Object({
  bucket: Type.String(),
  key: Type.String(),
  size: Type.Integer(),
  mimeType: Type.String(),
  uploadedAt: Type.String({ format: 'date-time' }),
  url: Type.String(),
  etag: Type.Union([Type.String(), Type.Null()]),
});

export const UploadStrategyBody = Type.Object({
  filename: Type.String({ minLength: 1, maxLength: 1024 }),
  contentType: Type.Optional(Type.String({ maxLength: 255 })),
  size: Type.Optional(Type.Integer({ minimum: 0 })),
});

export const UploadStrategy = Type.Object({
  method: Type.String({
    description: '"direct" (local storage: PUT the file to uploadUrl) or "presigned" (S3: POST a form)',
  }),
  uploadUrl: Type.String(),
  fields: Type.Record(Type.String(), Type.String()),
  key: Type.String(),
  confirmRequired: Type.Boolean(),
  confirmUrl: Type.String(),
  expiresAt: Type.String({ format: 'date-time' }),
});

export const ConfirmBody = Type.Object({
  size: Type.Integer({ minimum: 0 }),
  contentType: Type.Optional(Type.String({ maxLength: 255 })),
  etag: Type.Optional(Type.String({ maxLength: 256 })),
});

export const DownloadStrategy = Type.Object({
  method: Type.String(),
  url: Type.String(),
  expiresAt: Type.Optional(Type.String({ format: 'date-time' })),
});

export const Message = Type.Object({ message: Type.String() });

/** Image transform parameters of a download (docs/storage.md, "Image transforms"). */
export const TransformFields = {
  width: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_DIMENSION, description: 'Output width in pixels (image objects only)' }),
  ),
  height: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_DIMENSION, description: 'Output height in pixels' })),
  resize: Type.Optional(
    Type.Union([Type.Literal('cover'), Type.Literal('contain'), Type.Literal('fill')], {
      description: 'How width × height is filled (default cover)',
    }),
  ),
  format: Type.Optional(
    Type.Union(
      [Type.Literal('origin'), Type.Literal('webp'), Type.Literal('avif'), Type.Literal('jpeg'), Type.Literal('png')],
      {
        description: 'Output format; without it, Accept picks webp (else avif), else the source format',
      },
    ),
  ),
  quality: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, description: 'Encoder quality (default 80; AVIF 50)' }),
  ),
};
export const TransformQuery = Type.Object(TransformFields);

/** Download strategy: how long the link lives and, optionally, the image transform it is for. */
export const DownloadBody = Type.Object({
  expiresIn: Type.Integer({ minimum: 1, maximum: 604_800, default: 3600 }),
  ...TransformFields,
});
