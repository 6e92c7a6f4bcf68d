// Resumable uploads that break: the client killed at 40% (256 MiB), Plinth killed mid-upload
// (a child process running the built server), and unfinished uploads that expire.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { builtServer, builtServerEnv } from '../helpers/build.js';
import { newAdminKey } from '../../src/auth/credentials.js';
import { backends, freshDb } from '../helpers/db.js';
import { at, call, send } from '../helpers/http.js';
import { until } from '../helpers/until.js';
import { startStorageApp, type StorageTestApp } from './helpers.js';
import { hashOf, tusUpload } from './tus.js';
import { freePort } from '../helpers/port.js';

const PATH = '/api/storage/upload/resumable';
const MiB = 1024 * 1024;

/** A process's resident size now and its peak so far, in bytes (Linux: /proc/<pid>/status). */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}

/** SHA-256 and length of a response body, streamed. */
async function hashBody(r: Response): Promise<{ hash: string; size: number }> {
  const h = createHash('sha256');
  let size = 0;
  for await (const chunk of r.body as AsyncIterable<Uint8Array>) {
    h.update(chunk);
    size += chunk.length;
  }
  return { hash: h.digest('hex'), size };
}

describe.each(backends())('resumable uploads resume (%s)', (backend) => {
  let t: StorageTestApp;
  beforeAll(async () => {
    t = await startStorageApp(backend, 'local', { MAX_UPLOAD_BYTES: String(2048 * MiB) });
    await t.createBucket('big');
  });
  afterAll(async () => t?.close());

  it('256 MiB: the client is killed at 40% and resumes; the object has exactly the bytes sent', async () => {
    const size = 256 * MiB;
    const seed = 41;
    const meta = { bucketName: 'big', objectName: 'big.bin', contentType: 'application/octet-stream' };
    let killedAt = 0;
    const first = tusUpload(
      t.url + PATH,
      { seed, size },
      {
        headers: t.admin,
        metadata: meta,
        chunkSize: 16 * MiB,
        onProgress: (sent) => {
          if (!killedAt && sent >= 0.4 * size) {
            killedAt = sent;
            void first.upload.abort();
          }
        },
      },
    );
    await Promise.race([first.done, until(async () => killedAt > 0, 120_000, 'the upload to reach 40%')]);
    expect(killedAt).toBeGreaterThan(0);
    const url = first.upload.url!;
    const head = await call(at(url), 'HEAD', '', { headers: { ...t.admin, 'tus-resumable': '1.0.0' } });
    const held = Number(head.headers.get('upload-offset'));
    expect(held).toBeGreaterThan(0.3 * size);
    expect(held).toBeLessThan(size);
    // Not an object yet.
    expect((await t.fetch('/api/storage/buckets/big/objects/big.bin')).status).toBe(404);
    const second = tusUpload(
      t.url + PATH,
      { seed, size },
      { headers: t.admin, metadata: meta, uploadUrl: url, chunkSize: 16 * MiB },
    );
    await second.done;
    const r = await t.fetch('/api/storage/buckets/big/objects/big.bin');
    expect(r.status).toBe(200);
    expect(await hashBody(r)).toEqual({ hash: hashOf(seed, size), size });
    // Deleted afterwards: nothing left behind.
    expect((await t.json('DELETE', '/api/storage/buckets/big/objects/big.bin')).status).toBe(200);
    expect(readdirSync(path.join(t.dataDir, 'storage', '.tus'))).toEqual([]);
  }, 240_000);

  it('an unfinished upload expires: refused (410), then swept from disk by the periodic sweep', async () => {
    const t = await startStorageApp(backend, 'local', { RESUMABLE_UPLOAD_EXPIRY_SECONDS: '2' });
    onTestFinished(() => t.close());
    await t.createBucket('big');
    const r = await t.fetch(PATH, {
      method: 'POST',
      headers: {
        ...t.admin,
        'tus-resumable': '1.0.0',
        'upload-length': '100',
        'upload-metadata': `bucketName ${btoa('big')},objectName ${btoa('late.bin')}`,
        'content-type': 'application/offset+octet-stream',
      },
      body: 'x'.repeat(10),
    });
    expect(r.status).toBe(201);
    expect(r.headers.get('upload-expires')).toBeTruthy();
    const url = r.headers.get('location')!;
    const dir = path.join(t.dataDir, 'storage', '.tus');
    expect(readdirSync(dir).length).toBe(2); // the bytes and their info
    // The periodic sweep waits until the 410 is seen (else it may remove the upload first: 404).
    t.deps.resumable.stop();
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const late = await call(at(url), 'PATCH', '', {
      headers: {
        ...t.admin,
        'tus-resumable': '1.0.0',
        'upload-offset': '10',
        'content-type': 'application/offset+octet-stream',
      },
      raw: 'y',
    });
    expect([late.status, late.body.error]).toEqual([410, 'RESUMABLE_UPLOAD_NOT_FOUND']);
    // No call here: the in-process sweep (every second with this expiry), running again, removes it.
    t.deps.resumable.start();
    await until(async () => readdirSync(dir).length === 0, 10_000, 'the expired upload to be swept');
    expect((await t.fetch('/api/storage/buckets/big/objects/late.bin')).status).toBe(404);
  }, 30_000);
});

describe.each(backends())('resumable upload into S3 resumes (%s)', (backend) => {
  let t: StorageTestApp;
  beforeAll(async () => {
    t = await startStorageApp(backend, 's3');
    await t.createBucket('s3big');
  });
  afterAll(async () => t?.close());

  it('64 MiB: the client is killed at 40% and resumes; S3 holds exactly the bytes sent (a multipart put)', async () => {
    const size = 64 * MiB;
    const seed = 99;
    const meta = { bucketName: 's3big', objectName: 'movie.bin' };
    let killed = false;
    const first = tusUpload(
      t.url + PATH,
      { seed, size },
      {
        headers: t.admin,
        metadata: meta,
        chunkSize: 8 * MiB,
        onProgress: (sent) => {
          if (!killed && sent >= 0.4 * size) {
            killed = true;
            void first.upload.abort();
          }
        },
      },
    );
    await Promise.race([first.done, until(async () => killed, 60_000, 'the upload to reach 40%')]);
    const second = tusUpload(
      t.url + PATH,
      { seed, size },
      { headers: t.admin, metadata: meta, uploadUrl: first.upload.url!, chunkSize: 8 * MiB },
    );
    await second.done;
    const r = await t.fetch('/api/storage/buckets/s3big/objects/movie.bin');
    expect(await hashBody(r)).toEqual({ hash: hashOf(seed, size), size });
  }, 120_000);
});

// The built server (`node <build>/main.js`), killed with SIGKILL mid-upload and started again.
let BUILD_DIR = '';

describe.each(backends())('resumable upload across a Plinth crash (%s)', (backend) => {
  beforeAll(async () => {
    BUILD_DIR = await builtServer();
  }, 300_000);

  it('Plinth killed at 40% of 256 MiB, started again: the upload resumes, the bytes are identical, never held in memory', async () => {
    const { url: databaseUrl, drop, db } = await freshDb(backend);
    await db.close();
    const dataDir = mkdtempSync(path.join(tmpdir(), 'plinth-tus-crash-'));
    const adminKey = newAdminKey();
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const server = at(base);
    const env = builtServerEnv({
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      ADMIN_API_KEY: adminKey,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PLAN: 'off',
      MAX_UPLOAD_BYTES: String(512 * MiB),
    });
    const start = async () => {
      const proc = spawn(process.execPath, [`${BUILD_DIR}/main.js`], { env, stdio: 'ignore' });
      await until(
        async () => (await call(server, 'GET', '/api/health').catch(() => null))?.status === 200,
        60_000,
        'Plinth to start',
      );
      return proc;
    };
    const admin = { 'x-api-key': adminKey };
    let proc = await start();
    try {
      const r = await call(server, 'POST', '/api/storage/buckets', { headers: admin, body: { bucketName: 'crash' } });
      expect(r.status).toBe(201);
      const size = 256 * MiB;
      const seed = 7;
      const meta = { bucketName: 'crash', objectName: 'survivor.bin' };
      let killed = false;
      const first = tusUpload(
        base + PATH,
        { seed, size },
        {
          headers: admin,
          metadata: meta,
          chunkSize: 32 * MiB,
          onProgress: (sent) => {
            if (!killed && sent >= 0.4 * size) {
              killed = true;
              proc.kill('SIGKILL');
            }
          },
        },
      );
      await expect(first.done).rejects.toBeTruthy();
      expect(killed).toBe(true);
      await new Promise((resolve) => proc.once('exit', resolve));
      proc = await start();
      const before = memoryOf(proc.pid!);
      const second = tusUpload(
        base + PATH,
        { seed, size },
        { headers: admin, metadata: meta, uploadUrl: first.upload.url!, chunkSize: 32 * MiB },
      );
      await second.done;
      // The restarted server took the remaining ~154 MiB in 32 MiB PATCHes: streamed to disk, its
      // peak resident size rose by far less than that (a server holding the upload would not).
      expect(memoryOf(proc.pid!).peak - before.rss).toBeLessThan((0.6 * size) / 2);
      // 256 MiB: hashed as it streams in, never held whole.
      const got = await send(server, 'GET', '/api/storage/buckets/crash/objects/survivor.bin');
      expect(await hashBody(got)).toEqual({ hash: hashOf(seed, size), size });
    } finally {
      proc.kill('SIGTERM');
      await new Promise((resolve) => (proc.exitCode !== null ? resolve(null) : proc.once('exit', resolve)));
      rmSync(dataDir, { recursive: true, force: true });
      await drop();
    }
  }, 240_000);
});
