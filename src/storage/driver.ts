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
   * Streams `body` into the object, replacing any existing one only when the whole body
   * arrived: a body that errors (too large, aborted) leaves the old object, or nothing.
   */
  put(bucket: string, key: string, body: Readable, opts: { contentType: string }): Promise<PutResult>;
  /**
   * The object's bytes, or the inclusive `range` of them. Throws ObjectNotFound. `size`, when
   * the caller knows it, lets a driver size its read buffers (small objects stay cheap).
   */
  get(bucket: string, key: string, opts?: { range?: ByteRange; size?: number }): Promise<Readable>;
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
  presignPost?(bucket: string, key: string, opts: { contentType: string; maxBytes: number; expiresIn: number }): Promise<PresignedPost>;
  /** Presigned GET URL (object stores only). */
  presignGet?(bucket: string, key: string, opts: { expiresIn: number; attachment: boolean }): Promise<string>;
  close?(): Promise<void>;
}
