import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { FileStore } from '@tus/file-store';
import type { Upload } from '@tus/server';
import type { Identity } from '../auth/identity.js';
import { AppError } from '../errors/index.js';
import { writerId } from './access.js';
import { assertValidKey, BUCKET_NAME_PATTERN } from './keys.js';
import type { StorageService } from './service.js';
import type { StorageObject } from './types.js';

const BUCKET_NAME = new RegExp(BUCKET_NAME_PATTERN);
/** The metadata key holding who started an upload (set by the server, never by the client). */
const OWNER = 'plinthOwner';
const ADMIN = '*admin';

export interface ResumableOptions {
  storage: StorageService;
  /** Where uploads in progress are kept: a folder on the local driver's disk (DATA_DIR/storage/.tus). */
  directory: string;
  /** An unfinished upload expires this long after it was created. */
  expiresMs: number;
}

/**
 * Resumable uploads (tus 1.0.0) over the `@tus/*` stores: who may start, resume and end one,
 * and the move of a finished upload into an ordinary object through StorageService.putObject
 * (same access rules, metadata, cache and key lock as PUT). The HTTP face is
 * src/http/routes/storage/resumable.ts.
 */
export class ResumableUploads {
  readonly expiresMs: number;
  private readonly storage: StorageService;
  private readonly directory: string;
  private timer: NodeJS.Timeout | null = null;
  private store: Promise<FileStore> | null = null;

  constructor(opts: ResumableOptions) {
    this.storage = opts.storage;
    this.directory = opts.directory;
    this.expiresMs = opts.expiresMs;
  }

  /**
   * The tus file store, made on first use: a start that sees no upload does not load `@tus/*`
   * (issue #38). Its folder exists before the store answers (the store's own mkdir is not awaited).
   */
  datastore(): Promise<FileStore> {
    this.store ??= (async () => {
      const { FileStore } = await import('@tus/file-store');
      await mkdir(this.directory, { recursive: true });
      return new FileStore({ directory: this.directory, expirationPeriodInMilliseconds: this.expiresMs });
    })().catch((err) => {
      this.store = null;
      throw err;
    });
    return this.store;
  }

  get maxBytes(): number {
    return this.storage.maxUploadBytes;
  }

  /** A new upload id (random, so it cannot be guessed). */
  newId(): string {
    return `tus.${randomBytes(16).toString('hex')}`;
  }

  /**
   * Checks a new upload (the caller, the bucket and key, the declared length) as PUT would,
   * and answers the metadata to store with it: the client's keys and the owner.
   */
  async authorizeCreate(identity: Identity, upload: Upload): Promise<Record<string, string>> {
    const owner = writerId(identity) ?? ADMIN;
    if (upload.size === undefined) {
      throw new AppError('INVALID_INPUT', {
        message: 'Upload-Length is required (deferred lengths are not accepted).',
        nextActions: 'Send Upload-Length with the size of the file in bytes.',
      });
    }
    if (upload.size > this.maxBytes) {
      throw new AppError('PAYLOAD_TOO_LARGE', {
        message: `The upload is larger than the limit of ${this.maxBytes} bytes.`,
      });
    }
    const m = upload.metadata ?? {};
    const bucket = m.bucketName ?? '';
    const key = m.objectName ?? '';
    if (!BUCKET_NAME.test(bucket) || !key) {
      throw new AppError('INVALID_INPUT', {
        message: 'Upload-Metadata must name the bucket (bucketName: 1-63 of A-Z a-z 0-9 _ -) and the key (objectName).',
        nextActions: 'Send Upload-Metadata "bucketName <base64>,objectName <base64>[,contentType <base64>]".',
      });
    }
    assertValidKey(key);
    await this.storage.assertMayWrite(bucket, key, identity);
    return { bucketName: bucket, objectName: key, contentType: m.contentType ?? '', [OWNER]: owner };
  }

  /** Throws 404 unless `identity` started the upload `id` (or is an admin); 404 when it is gone too. */
  async authorizeAccess(identity: Identity, id: string): Promise<void> {
    const owner = writerId(identity) ?? ADMIN;
    let upload: Upload;
    try {
      upload = await (await this.datastore()).getUpload(id);
    } catch {
      throw notFound();
    }
    if (owner !== ADMIN && upload.metadata?.[OWNER] !== owner) throw notFound();
  }

  /**
   * Makes the finished upload the object its metadata names, through putObject (the access
   * rules are checked again, as the key may have been taken meanwhile): the local driver links
   * the file into place, S3 gets it streamed as an ordinary put (a multipart upload past 8 MiB).
   * On failure the upload is removed at once; on success `discard` removes it once the answer
   * is out.
   */
  async finish(identity: Identity, upload: Upload, base: string): Promise<StorageObject> {
    const m = upload.metadata ?? {};
    const file = path.join(this.directory, upload.id);
    const local = this.storage.driver.kind === 'local';
    try {
      return await this.storage.putObject({
        bucket: m.bucketName!,
        key: m.objectName!,
        ...(local ? { adopt: file } : { body: createReadStream(file, { highWaterMark: 1024 * 1024 }) }),
        contentType: m.contentType || null,
        identity,
        base,
      });
    } catch (err) {
      await this.discard(upload.id);
      throw err;
    }
  }

  /** Removes what the store holds of an upload (its bytes and its info); never throws. */
  async discard(id: string): Promise<void> {
    try {
      await rm(path.join(this.directory, id), { force: true });
      await (await this.datastore()).configstore.delete(id);
    } catch {
      // Left for the sweep.
    }
  }

  /** Removes expired unfinished uploads; answers how many. An empty folder needs no store to say 0. */
  async sweep(): Promise<number> {
    if (!this.store && (await readdir(this.directory).catch(() => [])).length === 0) return 0;
    return (await this.datastore()).deleteExpired();
  }

  /**
   * Sweeps periodically in this process (an in-memory timer for now: a job of the job
   * library once it lands), and once at start for uploads a previous run left.
   */
  start(everyMs = Math.min(Math.max(this.expiresMs / 4, 1000), 15 * 60_000)): void {
    if (this.timer) return;
    const run = () => void this.sweep().catch(() => {});
    run();
    this.timer = setInterval(run, everyMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

function notFound(): AppError {
  return new AppError('RESUMABLE_UPLOAD_NOT_FOUND');
}
