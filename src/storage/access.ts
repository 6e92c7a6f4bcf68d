import type { Identity } from '../auth/identity.js';
import { pgErrorInfo } from '../db/errors.js';
import { AppError } from '../errors/index.js';
import { ObjectNotFound } from './driver.js';
import { encodeKeyForPath } from './keys.js';
import type { BucketRow, ObjectRow } from './metadata.js';
import type { SignedObject } from './signing.js';

// Who may do what with buckets and objects, and the errors that say so. Public buckets are
// readable by anyone; private ones by admins and the object's uploader. Writes need a user or
// an admin; replacing or deleting an object needs its uploader or an admin. In a private
// bucket, someone else's object answers as a missing one (404) to every call.

/** The API path of an object (keys percent-encoded per segment). */
export function objectPath(bucket: string, key: string): string {
  return `/api/storage/buckets/${bucket}/objects/${encodeKeyForPath(key)}`;
}

export function isOwner(row: ObjectRow, identity: Identity): boolean {
  return identity.kind === 'admin' || (identity.kind === 'user' && row.uploadedBy === identity.userId);
}

/** Replacing or deleting needs the uploader or an admin; in a private bucket others are told the object does not exist. */
export function assertOwner(bucket: BucketRow, row: ObjectRow, identity: Identity): void {
  if (isOwner(row, identity)) return;
  if (!bucket.isPublic) throw objectNotFound(bucket.name, row.key);
  throw new AppError('FORBIDDEN', {
    message: `The object "${row.key}" belongs to another user.`,
    nextActions: 'Use another key, or ask its uploader or an admin.',
  });
}

/** The user id recorded as an object's uploader (null for an admin); refuses anon and nobody. */
export function writerId(identity: Identity): string | null {
  if (identity.kind === 'admin') return null;
  if (identity.kind === 'user') return identity.userId;
  if (identity.kind === 'none') throw new AppError('UNAUTHORIZED');
  throw new AppError('FORBIDDEN', { message: 'Uploading and deleting need a signed-in user or an admin.' });
}

export function assertMayReadPrivate(identity: Identity): void {
  if (identity.kind === 'none')
    throw new AppError('UNAUTHORIZED', { message: 'This bucket is private: a credential is required.' });
  if (identity.kind === 'anon') {
    throw new AppError('FORBIDDEN', {
      message: 'This bucket is private.',
      nextActions: 'Sign in as the user who uploaded the object, or use a signed URL from download-strategy.',
    });
  }
}

export function bucketNotFound(name: string, cause?: unknown): AppError {
  return new AppError('BUCKET_NOT_FOUND', { message: `Bucket "${name}" does not exist.`, cause });
}

export function objectNotFound(bucket: string, key: string, cause?: unknown): AppError {
  return new AppError('OBJECT_NOT_FOUND', { message: `Object "${key}" does not exist in bucket "${bucket}".`, cause });
}

/** A foreign-key violation (SQLSTATE 23503), as the db module translated it. */
export function isForeignKeyViolation(err: unknown): boolean {
  return pgErrorInfo(err instanceof AppError ? err.cause : err)?.code === '23503';
}

/** The driver's answer about a recorded object; bytes missing from the store are OBJECT_NOT_FOUND. */
export function recorded<T>(row: ObjectRow, answer: Promise<T>): Promise<T> {
  return answer.catch((err: unknown) => {
    throw err instanceof ObjectNotFound ? objectNotFound(row.bucket, row.key, err) : err;
  });
}

/**
 * What a signed link is bound to: this version of the object. The local driver's ETag is
 * random on every write, and the upload time changes on every write too (so a row without an
 * ETag is still bound to its version).
 */
export function signedObject(row: ObjectRow, transform = ''): SignedObject {
  // An image transform is signed too ("|" never occurs in an ETag or a date): a link for one
  // rendition reads neither the original nor another rendition.
  const version = `${row.etag ?? ''}@${row.uploadedAt.toISOString()}`;
  return { bucket: row.bucket, key: row.key, version: transform ? `${version}|${transform}` : version };
}
