import type { Identity } from '../auth/identity.js';
import type { Db } from '../db/types.js';
import { AppError } from '../errors/index.js';
import { ObjectNotFound, type StorageDriver } from './driver.js';
import { assertValidKey, generateKey, resolveContentType, servedInline } from './keys.js';
import { sql, type BucketRow, type ObjectRow } from './metadata.js';
import type { StorageCache } from './cache.js';
import type { StorageObject } from './types.js';
import type { UrlSigner } from './signing.js';
import { isOwner, objectPath, signedObject, writerId } from './access.js';

export interface UploadStrategy {
  method: 'direct' | 'presigned';
  uploadUrl: string;
  fields: Record<string, string>;
  key: string;
  confirmRequired: boolean;
  confirmUrl: string;
  expiresAt: string;
}

export interface DownloadStrategy {
  method: 'direct' | 'presigned';
  url: string;
  expiresAt?: string;
}

/** How long a presigned upload form stays valid (and a pending upload is kept). */
const UPLOAD_TTL_SECONDS = 3600;

export interface SignedTransfersOptions {
  db: Db;
  driver: StorageDriver;
  signer: UrlSigner;
  maxUploadBytes: number;
  /** Buckets, objects and their API shape (the storage service). */
  objects: TransferObjects;
}

/** What the transfers need of the storage service: a bucket lookup, read access, the cache, the API shape. */
export interface TransferObjects {
  bucket(name: string): Promise<BucketRow>;
  authorizeRead(req: {
    bucket: string;
    key: string;
    identity: Identity;
    token?: string;
    transform?: string;
  }): Promise<ObjectRow & { isPublic: boolean }>;
  readonly cache: StorageCache;
  toApi(r: ObjectRow, base: string): StorageObject;
}

/**
 * The two-step flows that hand the client a URL instead of the bytes: upload strategies (a
 * direct PUT locally, a presigned POST form on S3, then confirm-upload) and download strategies
 * (a public URL, an HMAC-signed local link, or a presigned S3 URL).
 */
export class SignedTransfers {
  private readonly db: Db;
  private readonly driver: StorageDriver;
  private readonly signer: UrlSigner;
  private readonly maxUploadBytes: number;
  private readonly objects: TransferObjects;

  constructor(opts: SignedTransfersOptions) {
    this.db = opts.db;
    this.driver = opts.driver;
    this.signer = opts.signer;
    this.maxUploadBytes = opts.maxUploadBytes;
    this.objects = opts.objects;
  }

  async uploadStrategy(req: {
    bucket: string;
    filename: string;
    contentType?: string;
    size?: number;
    identity: Identity;
    base: string;
  }): Promise<UploadStrategy> {
    const userId = writerId(req.identity);
    await this.objects.bucket(req.bucket);
    if (req.size !== undefined && req.size > this.maxUploadBytes) {
      throw new AppError('PAYLOAD_TOO_LARGE', {
        message: `The file is larger than the limit of ${this.maxUploadBytes} bytes.`,
      });
    }
    const key = assertValidKey(generateKey(req.filename));
    const contentType = resolveContentType(req.contentType, key);
    const expiresAt = new Date(Date.now() + UPLOAD_TTL_SECONDS * 1000);
    const confirmUrl = `${objectPath(req.bucket, key)}/confirm-upload`;
    if (!this.driver.presignPost) {
      return {
        method: 'direct',
        uploadUrl: req.base + objectPath(req.bucket, key),
        fields: {},
        key,
        confirmRequired: false,
        confirmUrl,
        expiresAt: expiresAt.toISOString(),
      };
    }
    const post = await this.driver.presignPost(req.bucket, key, {
      contentType,
      maxBytes: this.maxUploadBytes,
      expiresIn: UPLOAD_TTL_SECONDS,
    });
    await sql.upsertUpload(this.db, { bucket: req.bucket, key, userId, contentType, expiresAt });
    await this.sweepAbandonedUploads();
    return {
      method: 'presigned',
      uploadUrl: post.url,
      fields: post.fields,
      key,
      confirmRequired: true,
      confirmUrl,
      expiresAt: expiresAt.toISOString(),
    };
  }

  /**
   * Records a presigned upload once its bytes are in the store with the size (and ETag) the
   * client states. A wrong size or an oversize object is removed again. Confirming an object
   * that is already recorded checks it and returns it.
   */
  async confirmUpload(req: {
    bucket: string;
    key: string;
    size: number;
    contentType?: string;
    etag?: string;
    identity: Identity;
    base: string;
  }): Promise<StorageObject> {
    const key = assertValidKey(req.key);
    writerId(req.identity);
    const bucket = await this.objects.bucket(req.bucket);
    const etag = req.etag?.replace(/^(W\/)?"|"$/g, '');
    // Without a pending upload (none, or another confirm took it first) the call checks the
    // recorded object and removes nothing.
    const confirmed = async () => {
      const row = await sql.getObject(this.db, req.bucket, key);
      if (!row || !isOwner(row, req.identity)) throw uploadNotFound(key);
      if (row.size !== req.size || (etag && row.etag && etag !== row.etag)) throw mismatch(row.size, req.size);
      return this.objects.toApi(row, req.base);
    };
    const upload = await sql.getUpload(this.db, req.bucket, key);
    if (!upload) return confirmed();
    if (req.identity.kind !== 'admin' && !(req.identity.kind === 'user' && req.identity.userId === upload.userId)) {
      if (!bucket.isPublic) throw uploadNotFound(key);
      throw new AppError('FORBIDDEN', { message: 'This upload was started by someone else.' });
    }
    let head;
    try {
      head = await this.driver.head(req.bucket, key);
    } catch (err) {
      if (!(err instanceof ObjectNotFound)) throw err;
      // A concurrent confirm that discarded this upload took its row before removing the
      // object: with the row gone, answer from what that one left.
      if (!(await sql.getUpload(this.db, req.bucket, key))) return confirmed();
      throw new AppError('UPLOAD_INCOMPLETE', { message: `Nothing has been uploaded to "${key}" yet.`, cause: err });
    }
    // Recording and discarding each first take the pending upload (one atomic delete): of two
    // concurrent confirms only one acts, and the other answers from what that one left.
    const discard = async (refusal: AppError) => {
      if (!(await sql.takeUpload(this.db, req.bucket, key))) return confirmed();
      await this.driver.delete(req.bucket, key);
      throw refusal;
    };
    if (head.size > this.maxUploadBytes) {
      return discard(
        new AppError('PAYLOAD_TOO_LARGE', {
          message: `The uploaded object is larger than the limit of ${this.maxUploadBytes} bytes; it was removed.`,
        }),
      );
    }
    if (head.size !== req.size || (etag && head.etag && etag !== head.etag))
      return discard(mismatch(head.size, req.size, true));
    const ticket = this.objects.cache.beginWrite(req.bucket, key);
    let row: ObjectRow | null | undefined;
    try {
      row = await this.db.transaction(async (tx) => {
        const taken = await sql.takeUpload(tx, req.bucket, key);
        if (!taken) return null;
        return sql.upsertObject(tx, {
          bucket: req.bucket,
          key,
          size: head.size,
          mimeType: resolveContentType(head.contentType ?? taken.contentType, key),
          etag: head.etag,
          uploadedBy: taken.userId,
        });
      });
    } finally {
      // Null: another confirm recorded it (nothing known here).
      this.objects.cache.endWrite(ticket, req.bucket, key, row ?? undefined);
    }
    return row ? this.objects.toApi(row, req.base) : confirmed();
  }

  /** `transform` (canonical, images.ts) asks for a rendition: its link is always Plinth's, signed with it. */
  async downloadStrategy(req: {
    bucket: string;
    key: string;
    expiresIn: number;
    identity: Identity;
    base: string;
    transform?: string;
  }): Promise<DownloadStrategy> {
    const row = await this.objects.authorizeRead({ ...req, transform: undefined });
    const transform = req.transform ?? '';
    const url = req.base + objectPath(row.bucket, row.key) + (transform ? `?${transform}` : '');
    if (row.isPublic) return { method: 'direct', url };
    const exp = Math.floor(Date.now() / 1000) + req.expiresIn;
    const expiresAt = new Date(exp * 1000).toISOString();
    if (transform)
      return {
        method: 'direct',
        url: `${url}&token=${this.signer.sign(signedObject(row, transform), exp)}`,
        expiresAt,
      };
    if (this.driver.presignGet) {
      const signed = await this.driver.presignGet(row.bucket, row.key, {
        expiresIn: req.expiresIn,
        attachment: !servedInline(row.mimeType),
      });
      return { method: 'presigned', url: signed, expiresAt };
    }
    return { method: 'direct', url: `${url}?token=${this.signer.sign(signedObject(row), exp)}`, expiresAt };
  }

  /** Presigned uploads never confirmed: forget them and delete their bytes, a few at a time. */
  private async sweepAbandonedUploads(): Promise<void> {
    for (const u of await sql.takeAbandonedUploads(this.db, 20))
      await this.driver.delete(u.bucket, u.key).catch(() => {});
  }
}

function uploadNotFound(key: string): AppError {
  return new AppError('UPLOAD_NOT_FOUND', { message: `No upload was started for "${key}".` });
}

function mismatch(actual: number, claimed: number, removed = false): AppError {
  return new AppError('UPLOAD_MISMATCH', {
    message:
      actual !== claimed
        ? `The object has ${actual} bytes, not ${claimed}${removed ? '; the upload was removed' : ''}.`
        : `The ETag differs from the stored object${removed ? '; the upload was removed' : ''}.`,
  });
}
