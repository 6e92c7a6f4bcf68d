import type { Readable } from 'node:stream';
import type { Identity } from '../auth/identity.js';
import { pgErrorInfo } from '../db/errors.js';
import type { Db } from '../db/types.js';
import { AppError } from '../errors/index.js';
import { ObjectNotFound, type ByteRange, type ObjectHead, type ObjectRead, type StorageDriver } from './driver.js';
import { assertValidKey, encodeKeyForPath, generateKey, resolveContentType, servedInline } from './keys.js';
import { limitBytes } from './limit.js';
import { sql, type BucketRow, type ObjectRow } from './metadata.js';
import type { SignedObject, UrlSigner } from './signing.js';

/** A storage object as the API returns it. */
export interface StorageObject {
  bucket: string;
  key: string;
  size: number;
  mimeType: string;
  uploadedAt: string;
  url: string;
  etag: string | null;
}

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

/** What a caller may do, read from its identity. */
type Actor = Identity;

const UPLOAD_TTL_SECONDS = 3600;

export interface StorageServiceOptions {
  db: Db;
  driver: StorageDriver;
  signer: UrlSigner;
  maxUploadBytes: number;
}

/**
 * Buckets and objects: metadata in Postgres, bytes in the driver, access rules in one place.
 * Public buckets are readable by anyone; private ones by admins and the object's uploader.
 * Writes need a user or an admin; replacing or deleting an object needs its uploader or an admin.
 * In a private bucket, someone else's object answers as a missing one (404) to every call.
 * `base` arguments are the absolute URL prefix object URLs are built on.
 */
export class StorageService {
  readonly driver: StorageDriver;
  readonly maxUploadBytes: number;
  readonly #db: Db;
  readonly #signer: UrlSigner;

  constructor(o: StorageServiceOptions) {
    this.#db = o.db;
    this.driver = o.driver;
    this.#signer = o.signer;
    this.maxUploadBytes = o.maxUploadBytes;
  }

  // ---- buckets (admin) ----

  listBuckets(): Promise<string[]> {
    return sql.listBuckets(this.#db);
  }

  async createBucket(name: string, isPublic: boolean): Promise<BucketRow> {
    if (!(await sql.insertBucket(this.#db, name, isPublic))) {
      throw new AppError('ALREADY_EXISTS', { message: `Bucket "${name}" already exists.` });
    }
    return { name, isPublic };
  }

  async setBucketPublic(name: string, isPublic: boolean): Promise<BucketRow> {
    if (!(await sql.setBucketPublic(this.#db, name, isPublic))) throw bucketNotFound(name);
    return { name, isPublic };
  }

  /** Deletes the metadata first (so nothing is served any more), then the bytes. */
  async deleteBucket(name: string): Promise<void> {
    if (!(await sql.deleteBucket(this.#db, name))) throw bucketNotFound(name);
    await this.driver.deleteBucket(name);
  }

  async bucket(name: string): Promise<BucketRow> {
    const b = await sql.getBucket(this.#db, name);
    if (!b) throw bucketNotFound(name);
    return b;
  }

  // ---- objects ----

  async listObjects(
    bucket: string,
    q: { prefix?: string; search?: string; limit: number; offset: number },
    base: string,
  ): Promise<{ data: StorageObject[]; total: number }> {
    await this.bucket(bucket);
    const { rows, total } = await sql.listObjects(this.#db, bucket, q);
    return { data: rows.map((r) => this.toApi(r, base)), total };
  }

  /**
   * Streams `body` into `bucket/key` (create or replace) within MAX_UPLOAD_BYTES. Nothing is
   * stored when the body fails, is too large, or the bucket vanished meanwhile.
   */
  async putObject(o: {
    bucket: string;
    key: string;
    body: Readable;
    contentType: string | null | undefined;
    actor: Actor;
    base: string;
  }): Promise<StorageObject> {
    const key = assertValidKey(o.key);
    const userId = writerId(o.actor);
    const found = await sql.getBucketAndObject(this.#db, o.bucket, key);
    if (!found) throw bucketNotFound(o.bucket);
    const existing = found.object;
    if (existing) this.#assertOwner(found.bucket, existing, o.actor);
    const mimeType = resolveContentType(o.contentType, key);
    const put = await this.driver.put(o.bucket, key, limitBytes(o.body, this.maxUploadBytes), { contentType: mimeType });
    try {
      const row = await sql.upsertObject(this.#db, { bucket: o.bucket, key, size: put.size, mimeType, etag: put.etag, uploadedBy: userId });
      return this.toApi(row, o.base);
    } catch (err) {
      // The bucket was deleted while the bytes streamed in (one re-created under the same name
      // meanwhile takes the upload): its objects went with it, so the new bytes go too, even
      // those that replaced an object. Only this key (and folders it leaves empty) is removed,
      // never the bucket as a whole: that may already belong to a new bucket of the same name.
      const bucketGone = isForeignKeyViolation(err) && !(await sql.getBucket(this.#db, o.bucket));
      if (!existing || bucketGone) await this.driver.delete(o.bucket, key).catch(() => {});
      throw bucketGone ? bucketNotFound(o.bucket, err) : err;
    }
  }

  /** The object's metadata (and its bucket's visibility) when `actor` or a valid signed `token` may read it. */
  async authorizeRead(o: { bucket: string; key: string; actor: Actor; token?: string }): Promise<ObjectRow & { isPublic: boolean }> {
    const key = assertValidKey(o.key);
    const found = await sql.getBucketAndObject(this.#db, o.bucket, key);
    if (o.token !== undefined) {
      // A link reads only the version it was issued for. One for an object since replaced,
      // deleted or re-created answers like a bad token, so a token cannot probe keys either.
      if (!found?.object || !this.#signer.verify(signedObject(found.object), o.token)) throw new AppError('INVALID_SIGNED_URL');
      return { ...found.object, isPublic: found.bucket.isPublic };
    }
    if (!found) throw bucketNotFound(o.bucket);
    const { bucket, object } = found;
    if (!bucket.isPublic) assertMayReadPrivate(o.actor);
    // Someone else's private object looks the same as a missing one.
    if (!object || (!bucket.isPublic && !this.#isOwner(object, o.actor))) throw objectNotFound(o.bucket, key);
    return { ...object, isPublic: bucket.isPublic };
  }

  /** The bytes of an object authorised by authorizeRead, described by the driver's read. */
  openObject(row: ObjectRow, range?: ByteRange): Promise<ObjectRead> {
    return recorded(row, this.driver.get(row.bucket, row.key, { range }));
  }

  /** Size and ETag of an object authorised by authorizeRead, as the driver holds it now. */
  headObject(row: ObjectRow): Promise<ObjectHead> {
    return recorded(row, this.driver.head(row.bucket, row.key));
  }

  async deleteObject(o: { bucket: string; key: string; actor: Actor }): Promise<void> {
    const key = assertValidKey(o.key);
    writerId(o.actor);
    const bucket = await this.bucket(o.bucket);
    const row = await sql.getObject(this.#db, o.bucket, key);
    if (!row) throw objectNotFound(o.bucket, key);
    this.#assertOwner(bucket, row, o.actor);
    await sql.deleteObject(this.#db, o.bucket, key);
    await this.driver.delete(o.bucket, key);
  }

  async uploadStrategy(o: {
    bucket: string;
    filename: string;
    contentType?: string;
    size?: number;
    actor: Actor;
    base: string;
  }): Promise<UploadStrategy> {
    const userId = writerId(o.actor);
    await this.bucket(o.bucket);
    if (o.size !== undefined && o.size > this.maxUploadBytes) {
      throw new AppError('PAYLOAD_TOO_LARGE', { message: `The file is larger than the limit of ${this.maxUploadBytes} bytes.` });
    }
    const key = assertValidKey(generateKey(o.filename));
    const contentType = resolveContentType(o.contentType, key);
    const expiresAt = new Date(Date.now() + UPLOAD_TTL_SECONDS * 1000);
    const confirmUrl = `${objectPath(o.bucket, key)}/confirm-upload`;
    if (!this.driver.presignPost) {
      return {
        method: 'direct',
        uploadUrl: o.base + objectPath(o.bucket, key),
        fields: {},
        key,
        confirmRequired: false,
        confirmUrl,
        expiresAt: expiresAt.toISOString(),
      };
    }
    const post = await this.driver.presignPost(o.bucket, key, {
      contentType,
      maxBytes: this.maxUploadBytes,
      expiresIn: UPLOAD_TTL_SECONDS,
    });
    await sql.upsertUpload(this.#db, { bucket: o.bucket, key, userId, contentType, expiresAt });
    await this.#sweepAbandonedUploads();
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
  async confirmUpload(o: {
    bucket: string;
    key: string;
    size: number;
    contentType?: string;
    etag?: string;
    actor: Actor;
    base: string;
  }): Promise<StorageObject> {
    const key = assertValidKey(o.key);
    writerId(o.actor);
    const bucket = await this.bucket(o.bucket);
    const etag = o.etag?.replace(/^(W\/)?"|"$/g, '');
    // Without a pending upload (none, or another confirm took it first) the call checks the
    // recorded object and removes nothing.
    const confirmed = async () => {
      const row = await sql.getObject(this.#db, o.bucket, key);
      if (!row || !this.#isOwner(row, o.actor)) throw uploadNotFound(key);
      if (row.size !== o.size || (etag && row.etag && etag !== row.etag)) throw mismatch(row.size, o.size);
      return this.toApi(row, o.base);
    };
    const upload = await sql.getUpload(this.#db, o.bucket, key);
    if (!upload) return confirmed();
    if (o.actor.kind !== 'admin' && !(o.actor.kind === 'user' && o.actor.userId === upload.userId)) {
      if (!bucket.isPublic) throw uploadNotFound(key);
      throw new AppError('FORBIDDEN', { message: 'This upload was started by someone else.' });
    }
    let head;
    try {
      head = await this.driver.head(o.bucket, key);
    } catch (err) {
      if (err instanceof ObjectNotFound) throw new AppError('UPLOAD_INCOMPLETE', { message: `Nothing has been uploaded to "${key}" yet.`, cause: err });
      throw err;
    }
    // Recording and discarding each first take the pending upload (one atomic delete): of two
    // concurrent confirms only one acts, and the other answers from what that one left.
    const discard = async (refusal: AppError) => {
      if (!(await sql.takeUpload(this.#db, o.bucket, key))) return confirmed();
      await this.driver.delete(o.bucket, key);
      throw refusal;
    };
    if (head.size > this.maxUploadBytes) {
      return discard(new AppError('PAYLOAD_TOO_LARGE', { message: `The uploaded object is larger than the limit of ${this.maxUploadBytes} bytes; it was removed.` }));
    }
    if (head.size !== o.size || (etag && head.etag && etag !== head.etag)) return discard(mismatch(head.size, o.size, true));
    const row = await this.#db.transaction(async (tx) => {
      const taken = await sql.takeUpload(tx, o.bucket, key);
      if (!taken) return null;
      return sql.upsertObject(tx, {
        bucket: o.bucket,
        key,
        size: head.size,
        mimeType: resolveContentType(head.contentType ?? taken.contentType, key),
        etag: head.etag,
        uploadedBy: taken.userId,
      });
    });
    return row ? this.toApi(row, o.base) : confirmed();
  }

  async downloadStrategy(o: { bucket: string; key: string; expiresIn: number; actor: Actor; base: string }): Promise<DownloadStrategy> {
    const row = await this.authorizeRead(o);
    const url = o.base + objectPath(row.bucket, row.key);
    if (row.isPublic) return { method: 'direct', url };
    const exp = Math.floor(Date.now() / 1000) + o.expiresIn;
    const expiresAt = new Date(exp * 1000).toISOString();
    if (this.driver.presignGet) {
      const signed = await this.driver.presignGet(row.bucket, row.key, { expiresIn: o.expiresIn, attachment: !servedInline(row.mimeType) });
      return { method: 'presigned', url: signed, expiresAt };
    }
    return { method: 'direct', url: `${url}?token=${this.#signer.sign(signedObject(row), exp)}`, expiresAt };
  }

  /** Presigned uploads never confirmed: forget them and delete their bytes, a few at a time. */
  async #sweepAbandonedUploads(): Promise<void> {
    for (const u of await sql.takeAbandonedUploads(this.#db, 20)) await this.driver.delete(u.bucket, u.key).catch(() => {});
  }

  toApi(r: ObjectRow, base: string): StorageObject {
    return {
      bucket: r.bucket,
      key: r.key,
      size: r.size,
      mimeType: r.mimeType,
      uploadedAt: r.uploadedAt.toISOString(),
      url: base + objectPath(r.bucket, r.key),
      etag: r.etag,
    };
  }

  #isOwner(row: ObjectRow, actor: Actor): boolean {
    return actor.kind === 'admin' || (actor.kind === 'user' && row.uploadedBy === actor.userId);
  }

  /** Replacing or deleting needs the uploader or an admin; in a private bucket others are told the object does not exist. */
  #assertOwner(bucket: BucketRow, row: ObjectRow, actor: Actor): void {
    if (this.#isOwner(row, actor)) return;
    if (!bucket.isPublic) throw objectNotFound(bucket.name, row.key);
    throw new AppError('FORBIDDEN', {
      message: `The object "${row.key}" belongs to another user.`,
      nextActions: 'Use another key, or ask its uploader or an admin.',
    });
  }
}

/** The API path of an object (keys percent-encoded per segment). */
export function objectPath(bucket: string, key: string): string {
  return `/api/storage/buckets/${bucket}/objects/${encodeKeyForPath(key)}`;
}

function writerId(actor: Actor): string | null {
  if (actor.kind === 'admin') return null;
  if (actor.kind === 'user') return actor.userId;
  if (actor.kind === 'none') throw new AppError('UNAUTHORIZED');
  throw new AppError('FORBIDDEN', { message: 'Uploading and deleting need a signed-in user or an admin.' });
}

function assertMayReadPrivate(actor: Actor): void {
  if (actor.kind === 'none') throw new AppError('UNAUTHORIZED', { message: 'This bucket is private: a credential is required.' });
  if (actor.kind === 'anon') {
    throw new AppError('FORBIDDEN', {
      message: 'This bucket is private.',
      nextActions: 'Sign in as the user who uploaded the object, or use a signed URL from download-strategy.',
    });
  }
}

function bucketNotFound(name: string, cause?: unknown): AppError {
  return new AppError('BUCKET_NOT_FOUND', { message: `Bucket "${name}" does not exist.`, cause });
}

/** A foreign-key violation (SQLSTATE 23503), as the db module translated it. */
function isForeignKeyViolation(err: unknown): boolean {
  return pgErrorInfo(err instanceof AppError ? err.cause : err)?.code === '23503';
}

function objectNotFound(bucket: string, key: string, cause?: unknown): AppError {
  return new AppError('OBJECT_NOT_FOUND', { message: `Object "${key}" does not exist in bucket "${bucket}".`, cause });
}

/** The driver's answer about a recorded object; bytes missing from the store are OBJECT_NOT_FOUND. */
function recorded<T>(row: ObjectRow, answer: Promise<T>): Promise<T> {
  return answer.catch((err: unknown) => {
    throw err instanceof ObjectNotFound ? objectNotFound(row.bucket, row.key, err) : err;
  });
}

function uploadNotFound(key: string): AppError {
  return new AppError('UPLOAD_NOT_FOUND', { message: `No upload was started for "${key}".` });
}

/**
 * What a signed link is bound to: this version of the object. The local driver's ETag is
 * random on every write, and the upload time changes on every write too (so a row without an
 * ETag is still bound to its version).
 */
function signedObject(row: ObjectRow): SignedObject {
  return { bucket: row.bucket, key: row.key, version: `${row.etag ?? ''}@${row.uploadedAt.toISOString()}` };
}

function mismatch(actual: number, claimed: number, removed = false): AppError {
  return new AppError('UPLOAD_MISMATCH', {
    message:
      actual !== claimed
        ? `The object has ${actual} bytes, not ${claimed}${removed ? '; the upload was removed' : ''}.`
        : `The ETag differs from the stored object${removed ? '; the upload was removed' : ''}.`,
  });
}
