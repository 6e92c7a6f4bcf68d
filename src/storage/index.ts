import path from 'node:path';
import type { Config } from '../config/index.js';
import type { Db } from '../db/types.js';
import type { StorageDriver } from './driver.js';
import { LocalDriver } from './local.js';
import { S3Driver } from './s3.js';
import { StorageService } from './service.js';
import { UrlSigner } from './signing.js';

export { StorageService } from './service.js';

/** The driver the config chooses: S3 when S3_BUCKET is set, else files under DATA_DIR/storage. */
export function createDriver(config: Readonly<Config>): StorageDriver {
  return config.storage.s3 ? new S3Driver(config.storage.s3) : new LocalDriver(path.join(config.dataDir, 'storage'));
}

export function createStorage(config: Readonly<Config>, db: Db, jwtSecret: string, driver = createDriver(config)): StorageService {
  return new StorageService({ db, driver, signer: new UrlSigner(jwtSecret), maxUploadBytes: config.storage.maxUploadBytes });
}
