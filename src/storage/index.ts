import path from 'node:path';
import type { Config } from '../config/index.js';
import type { Db } from '../db/types.js';
import type { StorageDriver } from './driver.js';
import { LocalDriver } from './local.js';
import { StorageService } from './service.js';
import { UrlSigner } from './signing.js';
import { ResumableUploads } from './resumable.js';
import { ImageTransforms } from './images.js';

export { StorageService } from './service.js';
export { ResumableUploads } from './resumable.js';
export { ImageTransforms } from './images.js';

/**
 * The driver the config chooses: S3 when S3_BUCKET is set, else files under DATA_DIR/storage.
 * The S3 driver (and the AWS SDK with it) is imported only then: a default start does not load it.
 */
export async function createDriver(config: Readonly<Config>): Promise<StorageDriver> {
  if (!config.storage.s3) return new LocalDriver(path.join(config.dataDir, 'storage'));
  const { S3Driver } = await import('./s3.js');
  return new S3Driver(config.storage.s3);
}

export async function createStorage(config: Readonly<Config>, db: Db, jwtSecret: string): Promise<StorageService> {
  const driver = await createDriver(config);
  return new StorageService({
    db,
    driver,
    signer: new UrlSigner(jwtSecret),
    maxUploadBytes: config.storage.maxUploadBytes,
  });
}

/**
 * Resumable uploads, in progress under DATA_DIR/storage/.tus with the local driver (a finished
 * one is linked into place, same filesystem) or DATA_DIR/resumable with S3 (no local storage dir).
 */
export function createResumable(config: Readonly<Config>, storage: StorageService): ResumableUploads {
  return new ResumableUploads({
    storage,
    directory: config.storage.s3
      ? path.join(config.dataDir, 'resumable')
      : path.join(config.dataDir, 'storage', '.tus'),
    expiresMs: config.storage.resumableExpirySeconds * 1000,
  });
}

/** Image transforms, renditions cached under DATA_DIR/renditions. */
export function createImages(config: Readonly<Config>): ImageTransforms {
  return new ImageTransforms(path.join(config.dataDir, 'renditions'), config.storage.images);
}
