// Local storage on a full disk: a 2 MiB tmpfs mounted as DATA_DIR/storage. An upload that does
// not fit answers 507 INSUFFICIENT_STORAGE, leaves no file or row behind, and reads go on;
// health reports the disk. Also: a start on a nearly full disk, the free space in health, and
// the database's own "disk full" (SQLSTATE 53100) as a 507.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'plinth-fault-disk-'));
const storageDir = path.join(dataDir, 'storage');
mkdirSync(storageDir);
const mount = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', storageDir], { encoding: 'utf8' });
const why =
  mount.status === 0
    ? null
    : `cannot mount a tmpfs here (${(mount.stderr || mount.error?.message || '').trim()}); run as root or with CAP_SYS_ADMIN`;
if (why) {
  console.warn(`skipping the disk-full fault: ${why}`);
  rmSync(dataDir, { recursive: true, force: true });
}

describe.skipIf(why !== null)('local storage on a full disk', () => {
  let t: TestApp;
  let admin: Record<string, string>;
  const put = (key: string, bytes: number) => {
    const form = new FormData();
    form.append('file', new Blob([Buffer.alloc(bytes, 7)]), 'f.bin');
    return t.fetch(`/api/storage/buckets/tight/objects/${key}`, { method: 'PUT', headers: admin, body: form });
  };
  beforeAll(async () => {
    t = await startApp(undefined, { DATA_DIR: dataDir });
    admin = { 'x-api-key': t.adminKey };
    const r = await t.fetch('/api/storage/buckets', {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ bucketName: 'tight' }),
    });
    expect(r.status).toBe(201);
  });
  afterAll(async () => {
    await t?.close();
    spawnSync('umount', [storageDir]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 507 for an upload that does not fit, stores nothing of it, and keeps serving reads', async () => {
    expect((await put('first.bin', 1024 * 1024)).status).toBe(200);
    const r = await put('too-big.bin', 1536 * 1024);
    expect(r.status).toBe(507);
    const body = await r.json();
    expect(body).toMatchObject({ statusCode: 507, error: 'INSUFFICIENT_STORAGE' });
    expect(body.nextActions).toMatch(/disk space/);

    // Nothing half-stored: no row, no file, no temp file.
    expect((await t.fetch('/api/storage/buckets/tight/objects/too-big.bin', { headers: admin })).status).toBe(404);
    const list = await (await t.fetch('/api/storage/buckets/tight/objects', { headers: admin })).json();
    expect(list.data.map((o: { key: string }) => o.key)).toEqual(['first.bin']);
    expect(readdirSync(path.join(storageDir, '.tmp'))).toEqual([]);
    expect(readdirSync(path.join(storageDir, 'tight'))).toEqual(['first.bin']);

    // Reads keep working, and an upload that fits in what is left is stored.
    const read = await t.fetch('/api/storage/buckets/tight/objects/first.bin', { headers: admin });
    expect(read.status).toBe(200);
    expect((await read.arrayBuffer()).byteLength).toBe(1024 * 1024);
    expect((await put('small.bin', 4096)).status).toBe(200);
    expect((await t.fetch('/api/health?checks=true', { headers: admin })).status).toBe(200);
  });

  it('health reports the disk: degraded while nearly full, 503 once a write fails, ok again when freed', async () => {
    const health = async () => {
      const r = await t.fetch('/api/health?checks=true');
      return { status: r.status, body: await r.json() };
    };
    let h = await health();
    expect(h.status).toBe(200);
    expect(h.body.status).toBe('degraded');
    expect(h.body.checks.disk).toMatchObject({ status: 'degraded', message: expect.stringMatching(/free disk space/) });
    expect(h.body.checks.disk.freeBytes).toBeLessThan(1024 * 1024);
    // Fill what is left: nothing more can be written.
    const filler = path.join(storageDir, 'filler.bin');
    try {
      writeFileSync(filler, Buffer.alloc(4 * 1024 * 1024));
    } catch (err) {
      expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
    }
    h = await health();
    expect(h.status).toBe(503);
    expect(h.body.checks.disk).toMatchObject({ status: 'down' });
    rmSync(filler);
    h = await health();
    expect(h.status).toBe(200);
    expect(h.body.checks.disk.status).toBe('degraded');
  });
});

// A start on a disk with almost no room left: one line that says what is wrong.
const tiny = mkdtempSync(path.join(tmpdir(), 'plinth-fault-tiny-'));
const tinyMount = why
  ? null
  : spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', tiny], { encoding: 'utf8' });
if (tinyMount?.status !== 0) rmSync(tiny, { recursive: true, force: true });

describe.skipIf(tinyMount?.status !== 0)('a start on a nearly full disk', () => {
  afterAll(() => {
    spawnSync('umount', [tiny]);
    rmSync(tiny, { recursive: true, force: true });
  });

  it('exits 1 with one line on stderr naming DATA_DIR and the free space', () => {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env))
      if (v !== undefined && !/^(DATABASE_URL|REDIS_URL|S3_)/.test(k)) env[k] = v;
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { ...env, DATA_DIR: tiny, PORT: '0', HOST: '127.0.0.1' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines, r.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/^Plinth failed to start: The disk of DATA_DIR .* MiB free.*Free disk space/);
    expect(readdirSync(tiny)).toEqual([]); // nothing half-made
  }, 90_000);
});

describe('disk space in health', () => {
  it('is reported with the free bytes, and degraded below DISK_LOW_MB (still 200)', async () => {
    const ok = await startApp('embedded');
    const low = await startApp('embedded', { DISK_LOW_MB: '100000000' });
    try {
      const a = await ok.fetch('/api/health?checks=true');
      const body = await a.json();
      expect(a.status).toBe(200);
      expect(body.checks.disk).toEqual({ status: 'ok', freeBytes: expect.any(Number) });
      expect(body.checks.disk.freeBytes).toBeGreaterThan(0);
      const b = await low.fetch('/api/health?checks=true');
      const lowBody = await b.json();
      expect(b.status).toBe(200);
      expect(lowBody.status).toBe('degraded');
      expect(lowBody.checks.disk).toMatchObject({
        status: 'degraded',
        message: expect.stringMatching(/DISK_LOW_MB is 100000000/),
      });
    } finally {
      await ok.close();
      await low.close();
    }
  });
});

describe.each(backends())('the database out of disk space (SQLSTATE 53100) on %s', (backend) => {
  it('answers 507 INSUFFICIENT_STORAGE with the envelope, not a 500', async () => {
    const t = await startApp(backend);
    try {
      const admin = { 'x-api-key': t.adminKey, 'content-type': 'application/json' };
      // What Postgres raises when it cannot extend a file; here raised by a trigger on purpose.
      const query = `create table public.full_disk (id serial primary key, body text);
        create function public.no_space() returns trigger language plpgsql as $$ begin raise exception 'could not extend file' using errcode = '53100'; end $$;
        create trigger no_space before insert on public.full_disk for each row execute function public.no_space();`;
      expect(
        (await t.fetch('/api/database/sql', { method: 'POST', headers: admin, body: JSON.stringify({ query }) }))
          .status,
      ).toBe(200);
      const r = await t.fetch('/api/database/records/full_disk', {
        method: 'POST',
        headers: admin,
        body: JSON.stringify([{ body: 'x' }]),
      });
      expect(r.status).toBe(507);
      const body = await r.json();
      expect(body).toMatchObject({
        statusCode: 507,
        error: 'INSUFFICIENT_STORAGE',
        message: 'The database has no disk space left: nothing was written.',
      });
      expect(body.nextActions).toMatch(/DATA_DIR\/postgres/);
      // The admin SQL endpoint too: a full disk is no mistake in the SQL (not a 400 SQL_ERROR).
      const sql = await t.fetch('/api/database/sql', {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ query: 'insert into public.full_disk (body) values ($1)', params: ['x'] }),
      });
      expect(sql.status).toBe(507);
      expect(await sql.json()).toMatchObject({ error: 'INSUFFICIENT_STORAGE' });
    } finally {
      await t.close();
    }
  });
});
