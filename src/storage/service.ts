import type { Identity } from '../auth/identity.js';
import type { Db } from '../db/types.js';
import { AppError } from '../errors/index.js';
import type { ByteRange, ObjectHead, ObjectRead, StorageDriver } from './driver.js';
import { assertValidKey, resolveContentType } from './keys.js';
import { limitBytes, readWhole } from './limit.js';
import { KeyLock } from '../lib/key-lock.js';
import { MAX_CACHED_BODY, StorageCache } from './cache.js';
import { sql, type BucketRow, type ObjectRow } from './metadata.js';
import { ObjectRows } from './object-rows.js';
import type { UrlSigner } from './signing.js';
import {
  assertMayReadPrivate,
  assertOwner,
  bucketNotFound,
  isForeignKeyViolation,
  isOwner,
  objectNotFound,
  objectPath,
  recorded,
  signedObject,
  writerId,
} from './access.js';
import { SignedTransfers } from './signed-transfers.js';
import type { BatchDeleteResult, PutObjectRequest, StorageObject, StorageServiceOptions } from './types.js';

export { objectPath } from './access.js';
export type { BatchDeleteResult, PutObjectRequest, StorageObject, StorageServiceOptions } from './types.js';

/**
 * Buckets and objects: metadata in Postgres, bytes in the driver, access rules in access.ts;
 * the signed upload and download flow in `transfers`. `base` arguments are the absolute URL
 * prefix object URLs are built on.
 */
export class StorageService {
  readonly driver: StorageDriver;
  readonly maxUploadBytes: number;
  /** Upload and download strategies (presigned S3 forms, signed local links) and confirm-upload. */
  readonly transfers: SignedTransfers;
  /** Metadata and small bodies in memory; it misses until started (see cache.ts). */
  readonly cache = new StorageCache();
  /**
   * Writes of this instance to one key, one after another: the bytes are placed and the row
   * recorded in the same order, so the last write leaves both (and ownership is checked
   * against the row the previous write left).
   */
  private readonly writes = new KeyLock();
  /** The rows of concurrent writes, written several in one statement. */
  readonly rows: ObjectRows;
  private readonly db: Db;
  private readonly signer: UrlSigner;

  constructor(opts: StorageServiceOptions) {
    this.db = opts.db;
    this.rows = new ObjectRows(opts.db);
    this.driver = opts.driver;
    this.signer = opts.signer;
    this.maxUploadBytes = opts.maxUploadBytes;
    this.transfers = new SignedTransfers({ ...opts, objects: this });
  }

  // ---- buckets (admin) ----

  listBuckets(): Promise<string[]> {
    return sql.listBuckets(this.db);
  }

  async createBucket(name: string, isPublic: boolean): Promise<BucketRow> {
    const ticket = this.cache.begin();
    if (!(await sql.insertBucket(this.db, name, isPublic))) {
      throw new AppError('ALREADY_EXISTS', { message: `Bucket "${name}" already exists.` });
    }
    this.cache.keepBucket(ticket, name, { name, isPublic });
    return { name, isPublic };
  }

  async setBucketPublic(name: string, isPublic: boolean): Promise<BucketRow> {
    const ticket = this.cache.begin();
    if (!(await sql.setBucketPublic(this.db, name, isPublic))) throw bucketNotFound(name);
    this.cache.keepBucket(ticket, name, { name, isPublic });
    return { name, isPublic };
  }

  /** Deletes the metadata first (so nothing is served any more), then the bytes. */
  async deleteBucket(name: string): Promise<void> {
    const deleted = await sql.deleteBucket(this.db, name);
    this.cache.bucketDeleted(name);
    if (!deleted) throw bucketNotFound(name);
    await this.driver.deleteBucket(name);
  }

  async bucket(name: string): Promise<BucketRow> {
    let b = this.cache.bucket(name);
    if (b === undefined) {
      const ticket = this.cache.begin();
      b = await sql.getBucket(this.db, name);
      this.cache.keepBucket(ticket, name, b);
    }
    if (!b) throw bucketNotFound(name);
    return b;
  }

  /** The bucket and, when it exists, the object: from the cache, or in one round trip. */
  private async lookup(bucket: string, key: string): Promise<{ bucket: BucketRow; object: ObjectRow | null } | null> {
    const b = this.cache.bucket(bucket);
    if (b === null) return null;
    const object = this.cache.object(bucket, key);
    if (b && object !== undefined) return { bucket: b, object };
    const ticket = this.cache.begin();
    const found = await sql.getBucketAndObject(this.db, bucket, key);
    this.cache.keepBucket(ticket, bucket, found?.bucket ?? null);
    if (found) this.cache.keepObject(ticket, bucket, key, found.object);
    return found;
  }

  // ---- objects ----

  async listObjects(
    bucket: string,
    q: { prefix?: string; search?: string; limit: number; offset: number },
    base: string,
  ): Promise<{ data: StorageObject[]; total: number }> {
    await this.bucket(bucket);
    const { rows, total } = await sql.listObjects(this.db, bucket, q);
    return { data: rows.map((r) => this.toApi(r, base)), total };
  }

  /**
   * The objects the caller may read, with the read rules of getObject: a public bucket's are
   * anyone's; in a private one, an admin's are all, a user's their own uploads, and anon or
   * no credential is refused as a download would be.
   */
  async listReadable(
    identity: Identity,
    bucket: string,
    q: { prefix?: string; search?: string; limit: number; offset: number },
    base: string,
  ): Promise<{ data: StorageObject[]; total: number }> {
    const b = await this.bucket(bucket);
    if (!b.isPublic) assertMayReadPrivate(identity);
    const uploadedBy = b.isPublic || identity.kind !== 'user' ? undefined : identity.userId;
    const { rows, total } = await sql.listObjects(this.db, bucket, { ...q, uploadedBy });
    return { data: rows.map((r) => this.toApi(r, base)), total };
  }

  /**
   * Streams `body` into `bucket/key` (create or replace) within MAX_UPLOAD_BYTES. Nothing is
   * stored when the body fails, is too large, or the bucket vanished meanwhile.
   */
  async putObject(req: PutObjectRequest): Promise<StorageObject> {
    const key = assertValidKey(req.key);
    const userId = writerId(req.identity);
    return this.writes.run(`${req.bucket}/${key}`, () => this.put(req, key, userId));
  }

  /** Throws unless `identity` may write `bucket/key` now (a new key, or its own object). */
  async assertMayWrite(bucket: string, key: string, identity: Identity): Promise<void> {
    writerId(identity);
    const found = await this.lookup(bucket, assertValidKey(key));
    if (!found) throw bucketNotFound(bucket);
    if (found.object) assertOwner(found.bucket, found.object, identity);
  }

  /** putObject, once the writes of this instance to the key before it have ended. */
  private async put(req: PutObjectRequest, key: string, userId: string | null): Promise<StorageObject> {
    const found = await this.lookup(req.bucket, key);
    if (!found) throw bucketNotFound(req.bucket);
    const existing = found.object;
    if (existing) assertOwner(found.bucket, existing, req.identity);
    const mimeType = resolveContentType(req.contentType, key);
    // A small body is read whole first: written without a stream.
    const small = req.body && req.length !== undefined && req.length <= MAX_CACHED_BODY;
    const whole = small ? await readWhole(req.body!, this.maxUploadBytes) : null;
    const body = !whole && req.body ? limitBytes(req.body, this.maxUploadBytes) : undefined;
    // The bytes change before the row does: the write begins here.
    const ticket = this.cache.beginWrite(req.bucket, key);
    let row: ObjectRow | undefined;
    try {
      const put =
        req.adopt !== undefined && this.driver.adopt
          ? await this.driver.adopt(req.bucket, key, req.adopt, { contentType: mimeType })
          : await this.driver.put(req.bucket, key, whole ?? body!, { contentType: mimeType });
      row = await this.record(req.bucket, key, existing !== null, {
        size: put.size,
        mimeType,
        etag: put.etag,
        uploadedBy: userId,
      });
      return this.toApi(row, req.base);
    } finally {
      this.cache.endWrite(ticket, req.bucket, key, row);
    }
  }

  /** Records the object just stored (its bytes in place); removes them when the bucket went meanwhile. */
  private async record(
    bucket: string,
    key: string,
    replaced: boolean,
    o: { size: number; mimeType: string; etag: string; uploadedBy: string | null },
  ): Promise<ObjectRow> {
    try {
      return await this.rows.write({ bucket, key, ...o });
    } catch (err) {
      // The bucket was deleted while the bytes streamed in (one re-created under the same name
      // meanwhile takes the upload): its objects went with it, so the new bytes go too, even
      // those that replaced an object. Only this key (and folders it leaves empty) is removed,
      // never the bucket as a whole: that may already belong to a new bucket of the same name.
      const bucketGone = isForeignKeyViolation(err) && !(await sql.getBucket(this.db, bucket));
      if (!replaced || bucketGone) await this.driver.delete(bucket, key).catch(() => {});
      throw bucketGone ? bucketNotFound(bucket, err) : err;
    }
  }

  /** The object's metadata (and its bucket's visibility) when `identity` or a valid signed `token` may read it. */
  async authorizeRead(req: {
    bucket: string;
    key: string;
    identity: Identity;
    token?: string;
    transform?: string;
  }): Promise<ObjectRow & { isPublic: boolean }> {
    const key = assertValidKey(req.key);
    const found = await this.lookup(req.bucket, key);
    if (req.token !== undefined) {
      // A link reads only the version it was issued for. One for an object since replaced,
      // deleted or re-created answers like a bad token, so a token cannot probe keys either.
      if (!found?.object || !this.signer.verify(signedObject(found.object, req.transform), req.token))
        throw new AppError('INVALID_SIGNED_URL');
      return { ...found.object, isPublic: found.bucket.isPublic };
    }
    if (!found) throw bucketNotFound(req.bucket);
    const { bucket, object } = found;
    if (!bucket.isPublic) assertMayReadPrivate(req.identity);
    // Someone else's private object looks the same as a missing one.
    if (!object || (!bucket.isPublic && !isOwner(object, req.identity))) throw objectNotFound(req.bucket, key);
    return { ...object, isPublic: bucket.isPublic };
  }

  /** The bytes of an object authorised by authorizeRead, described by the driver's read. */
  openObject(row: ObjectRow, range?: ByteRange): Promise<ObjectRead> {
    return recorded(row, this.driver.get(row.bucket, row.key, { range }));
  }

  /**
   * The whole bytes of a small local object authorised by authorizeRead: from memory, or read
   * and kept there. Null for larger objects and object stores (whose bytes may change behind
   * the metadata, by a presigned form): those are read with openObject.
   */
  async smallObject(row: ObjectRow): Promise<Buffer | null> {
    if (this.driver.kind !== 'local' || row.size > MAX_CACHED_BODY) return null;
    const held = this.cache.body(row);
    if (held) return held;
    const ticket = this.cache.begin();
    const read = await this.openObject(row);
    if (read.size > MAX_CACHED_BODY) {
      read.body.destroy();
      return null;
    }
    const bytes = Buffer.concat(await read.body.toArray());
    this.cache.keepBody(ticket, row, bytes);
    return bytes;
  }

  /** Size and ETag of an object authorised by authorizeRead, as the driver holds it now. */
  headObject(row: ObjectRow): Promise<ObjectHead> {
    return recorded(row, this.driver.head(row.bucket, row.key));
  }

  async deleteObject(req: { bucket: string; key: string; identity: Identity }): Promise<void> {
    const key = assertValidKey(req.key);
    writerId(req.identity);
    await this.writes.run(`${req.bucket}/${key}`, () => this.delete(req, key));
  }

  private async delete(req: { bucket: string; identity: Identity }, key: string): Promise<void> {
    const found = await this.lookup(req.bucket, key);
    if (!found) throw bucketNotFound(req.bucket);
    const row = found.object;
    if (!row) throw objectNotFound(req.bucket, key);
    assertOwner(found.bucket, row, req.identity);
    const ticket = this.cache.beginWrite(req.bucket, key);
    let deleted = false;
    try {
      await sql.deleteObject(this.db, req.bucket, key);
      deleted = true;
    } finally {
      this.cache.endWrite(ticket, req.bucket, key, deleted ? null : undefined);
    }
    await this.driver.delete(req.bucket, key);
  }

  /**
   * Deletes several objects (InsForge's batch remove). Every key is checked first: one invalid
   * key refuses the whole batch and nothing is deleted. Then each key is deleted on its own,
   * and its outcome reported: a missing key (or, in a private bucket, someone else's) is
   * notFound, a refusal is failed with the reason.
   */
  async deleteObjects(req: { bucket: string; keys: string[]; identity: Identity }): Promise<BatchDeleteResult[]> {
    const keys = [...new Set(req.keys.map((k) => assertValidKey(k)))];
    writerId(req.identity);
    await this.bucket(req.bucket);
    const results: BatchDeleteResult[] = [];
    for (const key of keys) {
      try {
        await this.deleteObject({ bucket: req.bucket, key, identity: req.identity });
        results.push({ key, status: 'deleted' });
      } catch (err) {
        if (!(err instanceof AppError) || err.status >= 500) throw err;
        results.push(
          err.code === 'OBJECT_NOT_FOUND'
            ? { key, status: 'notFound' }
            : { key, status: 'failed', message: err.message },
        );
      }
    }
    return results;
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
}
