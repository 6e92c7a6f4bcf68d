// The shapes the storage service takes and gives.
import type { Readable } from 'node:stream';
import type { Identity } from '../auth/identity.js';
import type { Db } from '../db/types.js';
import type { StorageDriver } from './driver.js';
import type { UrlSigner } from './signing.js';

/** The outcome of one key of a batch delete. */
export type BatchDeleteResult =
  | { key: string; status: 'deleted' | 'notFound' }
  | { key: string; status: 'failed'; message: string };

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

export interface StorageServiceOptions {
  db: Db;
  driver: StorageDriver;
  signer: UrlSigner;
  maxUploadBytes: number;
}

/** One object to create or replace from a stream. */
export interface PutObjectRequest {
  bucket: string;
  key: string;
  /** The bytes; or, with `adopt`, none. */
  body?: Readable;
  /** A finished resumable upload the driver moves into place instead of a body (StorageDriver.adopt). */
  adopt?: string;
  /** The declared length of a raw body (Content-Length), when there is one. */
  length?: number;
  contentType: string | null | undefined;
  identity: Identity;
  base: string;
}
