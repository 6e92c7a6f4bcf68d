import { readdirSync } from 'node:fs';
import path from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import { startApp, type TestApp } from '../helpers/app.js';
import type { Backend } from '../helpers/db.js';
import { startS3, type TestS3 } from './s3server.js';

export type DriverKind = 'local' | 's3';

export interface StorageTestApp extends TestApp {
  s3: TestS3 | null;
  admin: Record<string, string>;
  json(method: string, p: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
  createBucket(name: string, isPublic?: boolean): Promise<void>;
  /** Multipart upload (POST without key, PUT with key). */
  upload(
    bucket: string,
    o: {
      key?: string;
      path?: string;
      data: string | Uint8Array;
      type?: string;
      filename?: string;
      headers?: Record<string, string>;
    },
  ): Promise<Response>;
  /** Files of the local driver (not counting its temp folder), as relative paths. */
  localFiles(): string[];
  /** Temp files of the local driver. */
  localTemp(): string[];
}

export const encodeKey = (key: string) => key.split('/').map(encodeURIComponent).join('/');

/** Plinth on a fresh database with the chosen storage driver (s3rver started for 's3'). */
export async function startStorageApp(
  backend: Backend,
  driver: DriverKind,
  env: Record<string, string> = {},
  /** logStream: receives the server's log lines (set LOG_LEVEL in `env`). */
  opts: { separateS3?: boolean; logStream?: NodeJS.WritableStream } = {},
): Promise<StorageTestApp> {
  const s3 = driver === 's3' ? await startS3({ separate: opts.separateS3 }) : null;
  let t: TestApp;
  try {
    t = await startApp(backend, { ...(s3?.env ?? {}), ...env }, undefined, opts.logStream);
  } catch (err) {
    await s3?.stop();
    throw err;
  }
  const admin = { 'x-api-key': t.adminKey };
  const root = path.join(t.dataDir, 'storage');
  const walk = (dir: string, rel = ''): string[] => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return [];
    }
    return entries.flatMap((e) =>
      e.isDirectory()
        ? (e.name === '.tmp' || e.name === '.tus') && !rel
          ? []
          : walk(path.join(dir, e.name), `${rel}${e.name}/`)
        : [`${rel}${e.name}`],
    );
  };
  const json: StorageTestApp['json'] = (method, p, body, headers = admin) =>
    t.fetch(p, {
      method,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  return {
    ...t,
    s3,
    admin,
    json,
    async createBucket(name, isPublic = true) {
      const r = await json('POST', '/api/storage/buckets', { bucketName: name, isPublic });
      if (r.status !== 201) throw new Error(`create bucket: ${r.status} ${await r.text()}`);
    },
    upload(bucket, o) {
      const fd = new FormData();
      if (o.path !== undefined) fd.append('path', o.path);
      fd.append('file', new Blob([o.data as BlobPart], { type: o.type ?? 'text/plain' }), o.filename ?? 'file.txt');
      const url =
        o.key === undefined
          ? `/api/storage/buckets/${bucket}/objects`
          : `/api/storage/buckets/${bucket}/objects/${encodeKey(o.key)}`;
      return t.fetch(url, { method: o.key === undefined ? 'POST' : 'PUT', headers: o.headers ?? admin, body: fd });
    },
    localFiles: () => walk(root),
    localTemp: () => {
      try {
        return readdirSync(path.join(root, '.tmp'));
      } catch {
        return [];
      }
    },
    async close() {
      await t.close();
      await s3?.stop();
    },
  };
}

/**
 * A PNG of side×side grey pixels, all black: a few KiB that decode to side² bytes (at 8,000 a
 * decompression bomb; at 7,000 an image under the pixel limit that is costly to encode).
 */
export function flatPng(side: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(side, 0);
  ihdr.writeUInt32BE(side, 4);
  ihdr[8] = 8; // bit depth; colour type 0 (grey), no interlace
  const rows = deflateSync(Buffer.alloc((side + 1) * side), { level: 9 });
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', rows),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
