// One contract for every storage driver: the local driver on a temp dir and the S3 driver
// against a real S3-compatible server (s3rver).
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors/index.js';
import { ObjectNotFound, type ObjectRead, type StorageDriver } from '../../src/storage/driver.js';
import { LocalDriver } from '../../src/storage/local.js';
import { S3Driver } from '../../src/storage/s3.js';
import { startS3 } from './s3server.js';

const MiB = 1024 * 1024;

/** The bytes of a read, checked against the length the read itself declares. */
async function readAll(read: ObjectRead): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of read.body) chunks.push(c as Buffer);
  const data = Buffer.concat(chunks);
  expect(data.length).toBe(read.range ? read.range.end - read.range.start + 1 : read.size);
  return data;
}

/** A body of `size` random-ish bytes made chunk by chunk, optionally failing after `failAt` bytes. */
function body(size: number, opts: { failAt?: number; seed?: number } = {}): { stream: Readable; sha: () => string } {
  const hash = createHash('sha256');
  let sent = 0;
  const block = randomBytes(64 * 1024);
  const stream = new Readable({
    read() {
      if (opts.failAt !== undefined && sent >= opts.failAt) return void this.destroy(new Error('client went away'));
      if (sent >= size) return void this.push(null);
      const n = Math.min(block.length, size - sent);
      const chunk = Buffer.from(block.subarray(0, n));
      chunk[0] = (sent / block.length) & 0xff;
      hash.update(chunk);
      sent += n;
      this.push(chunk);
    },
  });
  return { stream, sha: () => hash.digest('hex') };
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function exists(d: StorageDriver, bucket: string, key: string): Promise<boolean> {
  try {
    await d.head(bucket, key);
    return true;
  } catch (err) {
    if (err instanceof ObjectNotFound) return false;
    throw err;
  }
}

async function keys(d: StorageDriver, bucket: string, prefix?: string): Promise<string[]> {
  const out: string[] = [];
  for await (const k of d.list(bucket, prefix)) out.push(k);
  return out.sort();
}

const drivers: Array<
  [string, () => Promise<{ driver: StorageDriver; leftovers: () => string[]; stop: () => Promise<void> }>]
> = [
  [
    'local',
    async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'plinth-local-driver-'));
      const driver = new LocalDriver(dir);
      return {
        driver,
        leftovers: () => readdirSync(path.join(dir, '.tmp')),
        stop: async () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  ],
  [
    's3',
    async () => {
      const s3 = await startS3();
      const driver = new S3Driver(s3.config);
      return {
        driver,
        leftovers: () => [],
        stop: async () => {
          await driver.close();
          await s3.stop();
        },
      };
    },
  ],
];

describe.each(drivers)('storage driver contract: %s', (_name, make) => {
  let d: StorageDriver;
  let leftovers: () => string[];
  let stop: () => Promise<void>;
  beforeAll(async () => {
    ({ driver: d, leftovers, stop } = await make());
  });
  afterAll(async () => stop());

  it('is healthy', async () => {
    await expect(d.check()).resolves.toBeUndefined();
  });

  it('puts and gets the same bytes, with size and etag', async () => {
    const data = Buffer.from('hello, storage');
    const put = await d.put('b1', 'greeting.txt', Readable.from([data]), { contentType: 'text/plain' });
    expect(put.size).toBe(data.length);
    expect(put.etag).toMatch(/^[\w-]{8,}$/);
    expect(await readAll(await d.get('b1', 'greeting.txt'))).toEqual(data);
    expect((await d.head('b1', 'greeting.txt')).size).toBe(data.length);
  });

  it('stores an empty object', async () => {
    const put = await d.put('b1', 'empty', Readable.from([]), { contentType: 'text/plain' });
    expect(put.size).toBe(0);
    expect((await readAll(await d.get('b1', 'empty'))).length).toBe(0);
  });

  it('replaces an existing object', async () => {
    const one = await d.put('b1', 'r.txt', Readable.from([Buffer.from('one')]), { contentType: 'text/plain' });
    const two = await d.put('b1', 'r.txt', Readable.from([Buffer.from('second')]), { contentType: 'text/plain' });
    expect(two.etag).not.toBe(one.etag);
    expect((await readAll(await d.get('b1', 'r.txt'))).toString()).toBe('second');
  });

  it('reads an inclusive byte range', async () => {
    await d.put('b1', 'digits', Readable.from([Buffer.from('0123456789')]), { contentType: 'text/plain' });
    expect((await readAll(await d.get('b1', 'digits', { range: { start: 2, end: 5 } }))).toString()).toBe('2345');
    expect((await readAll(await d.get('b1', 'digits', { range: { start: 9, end: 9 } }))).toString()).toBe('9');
  });

  it('describes each read by the object as stored: size, range clamped to the end, past the end refused', async () => {
    await d.put('b1', 'desc', Readable.from([Buffer.from('0123456789')]), { contentType: 'text/plain' });
    const whole = await d.get('b1', 'desc');
    expect(whole).toMatchObject({ size: 10, range: undefined });
    expect((await readAll(whole)).toString()).toBe('0123456789');
    const tail = await d.get('b1', 'desc', { range: { start: 7, end: 99 } });
    expect(tail).toMatchObject({ size: 10, range: { start: 7, end: 9 } });
    expect((await readAll(tail)).toString()).toBe('789');
    const err = await d.get('b1', 'desc', { range: { start: 10, end: 20 } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('RANGE_NOT_SATISFIABLE');
  });

  it('throws ObjectNotFound for a missing object on get and head', async () => {
    await expect(d.get('b1', 'nope/missing.txt')).rejects.toBeInstanceOf(ObjectNotFound);
    await expect(d.head('b1', 'nope/missing.txt')).rejects.toBeInstanceOf(ObjectNotFound);
    await expect(d.get('no-such-bucket', 'x')).rejects.toBeInstanceOf(ObjectNotFound);
  });

  it('deletes, and deleting a missing object is no error', async () => {
    await d.put('b1', 'd/x.txt', Readable.from([Buffer.from('x')]), { contentType: 'text/plain' });
    await d.delete('b1', 'd/x.txt');
    expect(await exists(d, 'b1', 'd/x.txt')).toBe(false);
    await expect(d.delete('b1', 'd/x.txt')).resolves.toBeUndefined();
  });

  it('keeps keys with slashes, unicode and spaces apart, a key beside its own folder included', async () => {
    const ks = ['f', 'f/g', 'f/g/h.txt', 'ünï cødé/€ 1.txt', 'x%2Fy', 'a~b', "q'(*)!.txt"];
    for (const k of ks) await d.put('b2', k, Readable.from([Buffer.from(`v:${k}`)]), { contentType: 'text/plain' });
    for (const k of ks) expect((await readAll(await d.get('b2', k))).toString()).toBe(`v:${k}`);
    expect(await keys(d, 'b2')).toEqual([...ks].sort());
    expect(await keys(d, 'b2', 'f/')).toEqual(['f/g', 'f/g/h.txt']);
  });

  it('keeps buckets apart, and deleteBucket removes only that bucket', async () => {
    await d.put('b3', 'same', Readable.from([Buffer.from('three')]), { contentType: 'text/plain' });
    await d.put('b4', 'same', Readable.from([Buffer.from('four')]), { contentType: 'text/plain' });
    await d.put('b3', 'deep/er/x', Readable.from([Buffer.from('x')]), { contentType: 'text/plain' });
    expect((await readAll(await d.get('b3', 'same'))).toString()).toBe('three');
    await d.deleteBucket('b3');
    expect(await keys(d, 'b3')).toEqual([]);
    expect(await exists(d, 'b3', 'same')).toBe(false);
    expect((await readAll(await d.get('b4', 'same'))).toString()).toBe('four');
  });

  it('streams a 20 MiB object (several S3 parts) intact', async () => {
    const b = body(20 * MiB);
    const put = await d.put('big', 'twenty', b.stream, { contentType: 'application/octet-stream' });
    expect(put.size).toBe(20 * MiB);
    expect(sha(await readAll(await d.get('big', 'twenty')))).toBe(b.sha());
    expect((await d.head('big', 'twenty')).size).toBe(20 * MiB);
  });

  it('leaves nothing behind when a new upload fails midway (small and multi-part)', async () => {
    for (const failAt of [100 * 1024, 10 * MiB]) {
      await expect(
        d.put('fail', `new-${failAt}`, body(20 * MiB, { failAt }).stream, { contentType: 'text/plain' }),
      ).rejects.toThrow('client went away');
      expect(await exists(d, 'fail', `new-${failAt}`)).toBe(false);
    }
    expect(await keys(d, 'fail')).toEqual([]);
    expect(leftovers()).toEqual([]);
  });

  // S3 guarantees this; s3rver writes objects in place, so it is checked on the local driver only.
  it.runIf(_name === 'local')(
    'concurrent writes to one key leave one whole version, nothing half-written',
    async () => {
      const versions = Array.from({ length: 5 }, (_, i) => Buffer.alloc(200_000 + i, 65 + i));
      await Promise.all(versions.map((v) => d.put('race', 'same', Readable.from([v]), { contentType: 'text/plain' })));
      const got = await readAll(await d.get('race', 'same'));
      expect(versions.some((v) => v.equals(got))).toBe(true);
      expect(leftovers()).toEqual([]);
    },
  );

  it('leaves no temp file behind for a body that failed before the write began', async () => {
    for (let i = 0; i < 20; i++) {
      const gone = new Readable({ read() {} });
      gone.on('error', () => {});
      gone.destroy(new Error('client went away'));
      await expect(d.put('fail', `early-${i}`, gone, { contentType: 'text/plain' })).rejects.toThrow();
    }
    await new Promise((r) => setTimeout(r, 100));
    expect(leftovers()).toEqual([]);
    expect(await keys(d, 'fail')).toEqual([]);
  });

  it('keeps the old object when its replacement fails midway', async () => {
    await d.put('fail', 'keep', Readable.from([Buffer.from('original')]), { contentType: 'text/plain' });
    await expect(
      d.put('fail', 'keep', body(12 * MiB, { failAt: 9 * MiB }).stream, { contentType: 'text/plain' }),
    ).rejects.toThrow();
    expect((await readAll(await d.get('fail', 'keep'))).toString()).toBe('original');
  });
});

describe('local driver version tags', () => {
  it('are 32 hex digits, new on every write of the same bytes, from a buffer and a stream alike', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'plinth-tags-'));
    try {
      const d = new LocalDriver(root);
      const bytes = Buffer.from('same');
      const tags = [
        (await d.put('b', 'k', bytes, { contentType: 'text/plain' })).etag,
        (await d.put('b', 'k', bytes, { contentType: 'text/plain' })).etag,
        (await d.put('b', 'k', Readable.from([bytes]), { contentType: 'text/plain' })).etag,
      ];
      for (const tag of tags) expect(tag).toMatch(/^[0-9a-f]{32}$/);
      expect(new Set(tags).size).toBe(3);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('keys that do not fit the store', () => {
  it('S3: the bucket name, "/" and the key together are at most 1024 bytes, else INVALID_KEY', async () => {
    const s3 = await startS3();
    const driver = new S3Driver(s3.config);
    try {
      // In segments: s3rver keeps objects as files, whose names stop at 255 bytes.
      const fits = `${'k'.repeat(199)}/`.repeat(5) + 'k'.repeat(1024 - 'b/'.length - 1000);
      await driver.put('b', fits, Readable.from([Buffer.from('x')]), { contentType: 'text/plain' });
      expect((await readAll(await driver.get('b', fits))).toString()).toBe('x');
      for (const op of [
        () => driver.put('b', `${fits}k`, Readable.from([Buffer.from('x')]), { contentType: 'text/plain' }),
        () => driver.head('b', `${fits}k`),
      ]) {
        await expect(op()).rejects.toMatchObject({ code: 'INVALID_KEY', status: 400 });
      }
    } finally {
      await driver.close();
      await s3.stop();
    }
  });
});

describe('S3 driver when the object store is down', () => {
  it('answers SERVICE_UNAVAILABLE (503), not an internal error', async () => {
    const s3 = await startS3();
    const driver = new S3Driver(s3.config);
    await s3.stop();
    try {
      const err = await driver.head('b', 'k').catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'AppError', code: 'SERVICE_UNAVAILABLE', status: 503 });
      await expect(driver.check()).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    } finally {
      await driver.close();
    }
  });
});
