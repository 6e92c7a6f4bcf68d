import { Type } from '@fastify/type-provider-typebox';
import { BUCKET_NAME_PATTERN } from '../../../storage/keys.js';

export const BucketName = Type.String({ pattern: BUCKET_NAME_PATTERN, description: '1-63 letters, digits, "_" or "-"' });
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
  method: Type.String({ description: '"direct" (local storage: PUT the file to uploadUrl) or "presigned" (S3: POST a form)' }),
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

export const DownloadBody = Type.Object({
  expiresIn: Type.Integer({ minimum: 1, maximum: 604_800, default: 3600 }),
});

export const DownloadStrategy = Type.Object({
  method: Type.String(),
  url: Type.String(),
  expiresAt: Type.Optional(Type.String({ format: 'date-time' })),
});

export const Message = Type.Object({ message: Type.String() });
