// Helpers of the resumable-upload tests: tus-js-client uploads and deterministic bytes.
import { createCipheriv, createHash } from 'node:crypto';
import * as tus from 'tus-js-client';

/**
 * Deterministic bytes of any length, readable at any offset without the ones before it (an
 * AES-128-CTR key stream): a 1 GiB file needs no disk, and a resumed upload sends exactly the
 * bytes the first attempt would have.
 */
export function bytesAt(seed: number, start: number, length: number): Buffer {
  const block = Math.floor(start / 16);
  const iv = Buffer.alloc(16);
  iv.writeUInt32BE(seed, 0);
  iv.writeBigUInt64BE(BigInt(block), 8);
  const skip = start - block * 16;
  const cipher = createCipheriv('aes-128-ctr', Buffer.alloc(16, 7), iv);
  return cipher.update(Buffer.alloc(length + skip)).subarray(skip);
}

/** SHA-256 of the first `size` deterministic bytes of `seed`. */
export function hashOf(seed: number, size: number): string {
  const h = createHash('sha256');
  for (let at = 0; at < size; at += 8 * 1024 * 1024) h.update(bytesAt(seed, at, Math.min(8 * 1024 * 1024, size - at)));
  return h.digest('hex');
}

/** A tus-js-client file reader over the deterministic bytes (slices made on demand). */
export function generatedReader(seed: number, size: number): tus.UploadOptions['fileReader'] {
  return {
    async openFile() {
      return {
        size,
        async slice(start: number, end: number) {
          const e = Math.min(end, size);
          // `done` is left false: tus-js-client then checks the length against `value.size`,
          // which a Buffer does not have; the upload ends when the offset reaches the size.
          return { value: bytesAt(seed, start, e - start), done: false };
        },
        close() {},
      } as never;
    },
  };
}

export interface TusRun {
  upload: tus.Upload;
  done: Promise<void>;
}

/** Starts a tus-js-client upload; `onProgress` may abort it. `done` settles when it ends or fails. */
export function tusUpload(
  endpoint: string,
  file: Buffer | { seed: number; size: number },
  o: {
    headers: Record<string, string>;
    metadata: Record<string, string>;
    uploadUrl?: string;
    chunkSize?: number;
    onProgress?: (sent: number, total: number) => void;
  },
): TusRun {
  let upload!: tus.Upload;
  const done = new Promise<void>((resolve, reject) => {
    upload = new tus.Upload(Buffer.isBuffer(file) ? file : Buffer.alloc(0), {
      endpoint,
      uploadUrl: o.uploadUrl ?? null,
      headers: o.headers,
      metadata: o.metadata,
      chunkSize: o.chunkSize ?? Infinity,
      retryDelays: [],
      storeFingerprintForResuming: false,
      uploadDataDuringCreation: false,
      ...(Buffer.isBuffer(file) ? {} : { fileReader: generatedReader(file.seed, file.size), uploadSize: file.size }),
      onProgress: o.onProgress,
      onSuccess: () => resolve(),
      onError: (err) => reject(err),
    });
    upload.start();
  });
  done.catch(() => {});
  return { upload, done };
}
