// Local storage on a full disk: a 2 MiB tmpfs mounted as DATA_DIR/storage. An upload that does
// not fit answers 507 INSUFFICIENT_STORAGE, leaves no file or row behind, and reads go on.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'plinth-fault-disk-'));
const storageDir = path.join(dataDir, 'storage');
mkdirSync(storageDir);
const mount = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', storageDir], { encoding: 'utf8' });
const why = mount.status === 0 ? null : `cannot mount a tmpfs here (${(mount.stderr || mount.error?.message || '').trim()}); run as root or with CAP_SYS_ADMIN`;
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
    const r = await t.fetch('/api/storage/buckets', { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify({ bucketName: 'tight' }) });
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
});
