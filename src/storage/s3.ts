import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { Config } from '../config/index.js';
import { AppError } from '../errors/index.js';
import {
  ObjectNotFound,
  type ByteRange,
  type ObjectHead,
  type ObjectRead,
  type PresignedPost,
  type PutResult,
  type StorageDriver,
} from './driver.js';

/** S3's limit on an object key (Plinth's `<bucket>/` prefix counts). */
const S3_MAX_KEY_BYTES = 1024;

// S3's minimum part size is 5 MiB; with 8 MiB parts an upload holds two part buffers (≈16 MiB)
// whatever the object's size, and objects can reach 10,000 parts (78 GiB).
const PART_BYTES = 8 * 1024 * 1024;

type S3Config = NonNullable<Config['storage']['s3']>;

/** Translates S3's own not-found (by error name or HTTP status, never message text). */
function notFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } } | null;
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
}

const NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE', 'EHOSTUNREACH']);

/** Connection failures and S3 5xx answers (by code and status, never message text). */
function unavailable(err: unknown): boolean {
  const e = err as { code?: string; name?: string; $metadata?: { httpStatusCode?: number } } | null;
  const status = e?.$metadata?.httpStatusCode;
  return (
    (e?.code !== undefined && NETWORK.has(e.code)) ||
    (status !== undefined && status >= 500) ||
    e?.name === 'TimeoutError'
  );
}

const unquote = (etag: string | undefined): string => (etag ?? '').replace(/^"|"$/g, '');

/**
 * All Plinth buckets live in one S3 bucket (`S3_BUCKET`); the object `k` of Plinth bucket `b`
 * is the S3 key `b/k`. Uploads of unknown length go up as multipart uploads, part by part.
 */
export class S3Driver implements StorageDriver {
  readonly kind = 's3';
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(cfg: S3Config) {
    this.bucket = cfg.bucket;
    this.client = new S3Client({
      region: cfg.region,
      endpoint: cfg.endpoint ?? undefined,
      forcePathStyle: cfg.forcePathStyle,
      credentials:
        cfg.accessKeyId && cfg.secretAccessKey
          ? { accessKeyId: cfg.accessKeyId, secretAccessKey: cfg.secretAccessKey }
          : undefined,
      // Checksums only where S3 requires them: keeps plain (non aws-chunked) uploads that
      // every S3-compatible server understands.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  /** The client's send; an unreachable or failing S3 becomes SERVICE_UNAVAILABLE (503). */
  private readonly send = ((command: never, ...rest: never[]) =>
    (this.client.send as (...a: unknown[]) => Promise<unknown>)(command, ...rest).catch((err: unknown) => {
      throw unavailable(err)
        ? new AppError('SERVICE_UNAVAILABLE', { message: 'The object store is unavailable.', cause: err })
        : err;
    })) as S3Client['send'];

  /** The S3 key of an object: `<bucket>/<key>`, which S3 allows up to 1024 bytes. */
  private key(bucket: string, key: string): string {
    const s3Key = `${bucket}/${key}`;
    if (Buffer.byteLength(s3Key) > S3_MAX_KEY_BYTES) {
      throw new AppError('INVALID_KEY', {
        message: `The key is too long for the S3 store: with the bucket name and a "/", at most ${S3_MAX_KEY_BYTES} bytes.`,
      });
    }
    return s3Key;
  }

  async put(bucket: string, key: string, body: Readable | Buffer, opts: { contentType: string }): Promise<PutResult> {
    const Bucket = this.bucket;
    const Key = this.key(bucket, key);
    // Small objects: chunks are kept as they come and sent with one PutObject. Past one part,
    // two part-sized buffers are reused in turn (one being sent, one being filled), so a large
    // upload holds ~16 MiB and leaves no part-sized garbage behind.
    let pending: Buffer[] | null = [];
    let pendingBytes = 0;
    let buffers: [Buffer, Buffer] | null = null;
    let current: 0 | 1 = 0;
    let filled = 0;
    let size = 0;
    let uploadId: string | undefined;
    const parts: { ETag: string; PartNumber: number }[] = [];
    let inflight: Promise<void> | null = null;
    const sendPart = async (data: Buffer) => {
      uploadId ??= (await this.send(new CreateMultipartUploadCommand({ Bucket, Key, ContentType: opts.contentType })))
        .UploadId!;
      const PartNumber = parts.length + 1;
      parts.push({ ETag: '', PartNumber });
      const id = uploadId;
      inflight = this.send(
        new UploadPartCommand({ Bucket, Key, UploadId: id, PartNumber, Body: data, ContentLength: data.length }),
      ).then((r) => {
        parts[PartNumber - 1]!.ETag = r.ETag!;
      });
      inflight.catch(() => {}); // awaited below; never an unhandled rejection
    };
    /** Copies `chunk` into the part being filled, sending each part as it fills up. */
    const fill = async (chunk: Buffer) => {
      let offset = 0;
      while (offset < chunk.length) {
        const n = chunk.copy(buffers![current], filled, offset);
        filled += n;
        offset += n;
        if (filled === PART_BYTES) {
          await inflight; // the other buffer is free again once its part is sent
          await sendPart(buffers![current]);
          current = current === 0 ? 1 : 0;
          filled = 0;
        }
      }
    };
    try {
      for await (const chunk of (Buffer.isBuffer(body) ? [body] : body) as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (pending) {
          pending.push(chunk);
          pendingBytes += chunk.length;
          if (pendingBytes < PART_BYTES) continue;
          buffers = [Buffer.allocUnsafe(PART_BYTES), Buffer.allocUnsafe(PART_BYTES)];
          const first = pending;
          pending = null;
          for (const c of first) await fill(c);
        } else {
          await fill(chunk);
        }
      }
      if (pending) {
        const data = Buffer.concat(pending, pendingBytes);
        const r = await this.send(
          new PutObjectCommand({ Bucket, Key, Body: data, ContentLength: data.length, ContentType: opts.contentType }),
        );
        return { size, etag: unquote(r.ETag) };
      }
      await inflight;
      if (filled > 0) await sendPart(buffers![current].subarray(0, filled));
      await inflight;
      const r = await this.send(
        new CompleteMultipartUploadCommand({ Bucket, Key, UploadId: uploadId, MultipartUpload: { Parts: parts } }),
      );
      return { size, etag: unquote(r.ETag) };
    } catch (err) {
      if (uploadId) {
        await (inflight as Promise<void> | null)?.catch(() => {});
        await this.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId: uploadId })).catch(() => {});
      }
      throw err;
    }
  }

  async get(bucket: string, key: string, opts: { range?: ByteRange } = {}): Promise<ObjectRead> {
    let r;
    try {
      r = await this.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: this.key(bucket, key),
          Range: opts.range ? `bytes=${opts.range.start}-${opts.range.end}` : undefined,
        }),
      );
    } catch (err) {
      if (notFound(err)) throw new ObjectNotFound(bucket, key, { cause: err });
      if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 416) {
        throw new AppError('RANGE_NOT_SATISFIABLE', { cause: err });
      }
      throw err;
    }
    // What S3 sends is described by S3's own answer, not by Plinth's metadata: the object may
    // have been replaced since it was recorded (a presigned POST form stays valid until it expires).
    const body = r.Body as Readable;
    const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(r.ContentRange ?? '');
    const range = m ? { start: Number(m[1]), end: Number(m[2]) } : undefined;
    const length = range ? range.end - range.start + 1 : r.ContentLength;
    if (r.ContentLength === undefined || (r.ContentRange && !m) || length !== r.ContentLength) {
      body.destroy();
      throw new Error(`S3 answered a read of ${bucket}/${key} without a consistent length`);
    }
    return { body, size: m ? Number(m[3]) : r.ContentLength, range, etag: r.ETag ? unquote(r.ETag) : null };
  }

  async head(bucket: string, key: string): Promise<ObjectHead> {
    try {
      const r = await this.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.key(bucket, key) }));
      return {
        size: r.ContentLength ?? 0,
        etag: r.ETag ? unquote(r.ETag) : null,
        contentType: r.ContentType ?? null,
        lastModified: r.LastModified ?? new Date(),
      };
    } catch (err) {
      if (notFound(err)) throw new ObjectNotFound(bucket, key, { cause: err });
      throw err;
    }
  }

  async delete(bucket: string, key: string): Promise<void> {
    await this.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.key(bucket, key) }));
  }

  private async *pages(prefix: string): AsyncGenerator<string[]> {
    let token: string | undefined;
    do {
      const r = await this.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      yield (r.Contents ?? []).map((c) => c.Key!).filter(Boolean);
      token = r.IsTruncated ? r.NextContinuationToken : undefined;
    } while (token);
  }

  async *list(bucket: string, prefix = ''): AsyncIterable<string> {
    const base = `${bucket}/`;
    for await (const page of this.pages(base + prefix)) for (const k of page) yield k.slice(base.length);
  }

  async deleteBucket(bucket: string): Promise<void> {
    for await (const page of this.pages(`${bucket}/`)) {
      if (!page.length) continue;
      await this.send(
        new DeleteObjectsCommand({
          Bucket: this.bucket,
          Delete: { Objects: page.map((Key) => ({ Key })), Quiet: true },
        }),
      );
    }
  }

  async check(): Promise<void> {
    await this.send(new HeadBucketCommand({ Bucket: this.bucket }));
  }

  async presignPost(
    bucket: string,
    key: string,
    opts: { contentType: string; maxBytes: number; expiresIn: number },
  ): Promise<PresignedPost> {
    const { url, fields } = await createPresignedPost(this.client, {
      Bucket: this.bucket,
      Key: this.key(bucket, key),
      Conditions: [
        ['content-length-range', 0, opts.maxBytes],
        ['eq', '$Content-Type', opts.contentType],
      ],
      Fields: { 'Content-Type': opts.contentType },
      Expires: opts.expiresIn,
    });
    return { url, fields };
  }

  async presignGet(bucket: string, key: string, opts: { expiresIn: number; attachment: boolean }): Promise<string> {
    return getSignedUrl(
      this.client,
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: this.key(bucket, key),
        ResponseContentDisposition: opts.attachment ? 'attachment' : undefined,
      }),
      { expiresIn: opts.expiresIn },
    );
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}
