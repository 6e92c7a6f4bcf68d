import type { Readable } from 'node:stream';

/** Raised by every driver when an object does not exist (each maps its own not-found to it). */
export class ObjectNotFound extends Error {
  constructor(
    readonly bucket: string,
    readonly key: string,
    options?: { cause?: unknown },
  ) {
    super(`Object not found: ${bucket}/${key}`, options);
    this.name = 'ObjectNotFound';
  }
}

export interface PutResult {
  size: number;
  /** Opaque entity tag (no quotes). */
  etag: string;
}

export interface ObjectHead {
  size: number;
  etag: string | null;
  contentType: string | null;
  lastModified: Date;
}

/** Inclusive byte range, as in HTTP `Range: bytes=start-end`. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * An open read, described by the store itself (not by Plinth's metadata, which may be stale):
 * `body` holds exactly `range` (or, without one, all `size` bytes) of the object as it is now.
 */
export interface ObjectRead {
  body: Readable;
  /** Size of the whole object. */
  size: number;
  /** The bytes `body` holds, when a range was read. */
  range?: ByteRange;
  /** The store's entity tag (no quotes), null when it has none of its own. */
  etag: string | null;
}

/** A presigned browser upload: POST a multipart form with `fields` and then `file` to `url`. */
export interface PresignedPost {
  url: string;
  fields: Record<string, string>;
}

/**
 * Where object bytes live. Keys are already validated (see keys.ts); buckets are Plinth
 * bucket names. Metadata (who uploaded, content type, listing) lives in Postgres, not here.
 */
export interface StorageDriver {
  readonly kind: 'local' | 's3';
  /**
   * Streams `body` (or writes it, when held whole) into the object, replacing any existing
   * one only when the whole body arrived: a body that errors (too large, aborted) leaves the
   * old object, or nothing.
   */
  put(bucket: string, key: string, body: Readable | Buffer, opts: { contentType: string }): Promise<PutResult>;
  /**
   * The object's bytes, or the inclusive `range` of them (its end clamped to the object).
   * Throws ObjectNotFound, and RANGE_NOT_SATISFIABLE when the range starts past the end.
   */
  get(bucket: string, key: string, opts?: { range?: ByteRange }): Promise<ObjectRead>;
  /** Size and etag. Throws ObjectNotFound. */
  head(bucket: string, key: string): Promise<ObjectHead>;
  /** Removes the object; removing a missing object is not an error. */
  delete(bucket: string, key: string): Promise<void>;
  /** The keys under `prefix` (all when empty), in no particular order. */
  list(bucket: string, prefix?: string): AsyncIterable<string>;
  /** Removes every object of the bucket. */
  deleteBucket(bucket: string): Promise<void>;
  /** Throws when the backing store is unreachable or not writable (health check). */
  check(): Promise<void>;
  /** Presigned browser upload limited to `maxBytes` and `contentType` (object stores only). */
  presignPost?(
    bucket: string,
    key: string,
    opts: { contentType: string; maxBytes: number; expiresIn: number },
  ): Promise<PresignedPost>;
  /** Presigned GET URL (object stores only). */
  presignGet?(bucket: string, key: string, opts: { expiresIn: number; attachment: boolean }): Promise<string>;
  /**
   * Makes the file `source` (on the driver's own disk) the object, replacing any existing one
   * in one step, without copying its bytes; the source stays (local store only).
   */
  adopt?(bucket: string, key: string, source: string, opts: { contentType: string }): Promise<PutResult>;
  close?(): Promise<void>;
}
