// Backups kept on the server (/api/admin/backups) of a server on its own embedded Postgres:
// made in the background one at a time, listed, downloaded whole (restore accepts it and the
// restored cluster has the data), BACKUP_KEEP, hostile names, a restart or a stop while one
// runs, a full disk (a 1 MiB tmpfs as BACKUP_DIR); and the 501 of a database Plinth does not run.
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMBEDDED_DATABASE, startCluster } from '../../src/db/embedded/index.js';
import { startConfiguredApp, type ConfiguredApp } from '../helpers/configured-app.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { cli } from '../helpers/cli.js';

/** A backup, a restore through the CLI and a server start each take many seconds on 2 busy cores. */
const SLOW = { timeout: 300_000 };
const NAME = /^plinth-backup-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z\.tar\.gz$/;

interface Kept {
  name: string;
  size: number;
  createdAt: string;
  status: 'running' | 'ready' | 'failed';
  error?: string;
}

describe('backups kept on the server (embedded Postgres)', () => {
  let root: string;
  let t: ConfiguredApp | null = null;
  let adminKey: string;
  let anonKey: string;
  const dir = (name: string) => path.join(root, name);
  const backupDir = () => path.join(dir('src'), 'backups');
  const admin = () => ({ 'x-api-key': adminKey });
  const call = async (method: string, p: string, headers: Record<string, string> = admin()) => {
    const r = await t!.fetch(p, { method, headers });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : null, headers: r.headers };
  };
  const list = async () => (await call('GET', '/api/admin/backups')).body as Kept[];
  const sql = async (query: string) => {
    const r = await t!.fetch('/api/database/sql', {
      method: 'POST',
      headers: { ...admin(), 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
    });
    expect(r.status, await r.clone().text()).toBe(200);
    return ((await r.json()) as { rows: any[] }).rows;
  };
  /** Starts a backup and waits until the list shows it done; returns its final entry. */
  const backup = async (): Promise<Kept> => {
    const r = await call('POST', '/api/admin/backups');
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    await expect
      .poll(async () => (await list()).find((b) => b.name === r.body.name)?.status, { timeout: 120_000, interval: 200 })
      .not.toBe('running');
    return (await list()).find((b) => b.name === r.body.name)!;
  };
  const stop = async () => {
    const x = t!;
    t = null;
    await x.close();
  };

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'plinth-kept-'));
    chmodSync(root, 0o711); // postgres runs as the user plinth when the tests run as root
    t = await startConfiguredApp({ DATA_DIR: dir('src'), BACKUP_KEEP: '2' });
    adminKey = t.deps.generatedAdminKey!;
    anonKey = t.deps.credentials.anonKey;
  });
  afterAll(async () => {
    if (t) await stop();
    rmSync(root, { recursive: true, force: true });
  });

  it(
    'starts one in the background (202, a second POST meanwhile is a 409), lists it ready, downloads a whole archive',
    SLOW,
    async () => {
      await sql(
        `create table public.notes (id serial primary key, body text not null); insert into public.notes (body) values ('kept ✓')`,
      );
      expect(await list()).toEqual([]);
      for (const [method, p] of [
        ['GET', '/api/admin/backups'],
        ['POST', '/api/admin/backups'],
        ['GET', '/api/admin/backups/plinth-backup-2026-11-28T05-30-00-123Z.tar.gz'],
        ['DELETE', '/api/admin/backups/plinth-backup-2026-11-28T05-30-00-123Z.tar.gz'],
      ]) {
        expect((await call(method!, p!, { apikey: anonKey })).status, `${method} ${p}`).toBe(403);
      }

      const started = await call('POST', '/api/admin/backups');
      expect(started.status).toBe(202);
      expect(started.body).toMatchObject({ status: 'running' });
      expect(started.body.name).toMatch(NAME);
      const again = await call('POST', '/api/admin/backups');
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({ statusCode: 409, error: 'BACKUP_RUNNING' });
      expect(again.body.nextActions).toMatch(/GET \/api\/admin\/backups/);
      // Never listed as ready before it is whole; the temp file is not a listed entry.
      const during = await list();
      expect(during.map((b) => b.name)).toEqual([started.body.name]);
      expect(['running', 'ready']).toContain(during[0]!.status);
      // Its download is refused while it runs (or served once it is whole), never half a file.
      const early = await t!.fetch(`/api/admin/backups/${started.body.name}`, { headers: admin() });
      if (early.status === 200)
        expect(Number(early.headers.get('content-length'))).toBe((await early.arrayBuffer()).byteLength);
      else expect((await early.json()).error).toBe('BACKUP_RUNNING');

      await expect.poll(async () => (await list())[0]?.status, { timeout: 120_000, interval: 200 }).toBe('ready');
      const [ready] = await list();
      expect(ready).toMatchObject({ name: started.body.name, status: 'ready' });
      expect(Date.parse(ready!.createdAt)).toBeGreaterThan(Date.now() - 120_000);
      expect(ready!.size).toBeGreaterThan(100_000);
      expect(readdirSync(backupDir())).toEqual([ready!.name]);
      expect(statSync(path.join(backupDir(), ready!.name)).mode & 0o777).toBe(0o600);

      const r = await t!.fetch(`/api/admin/backups/${ready!.name}`, { headers: admin() });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe('application/gzip');
      expect(r.headers.get('content-disposition')).toBe(`attachment; filename="${ready!.name}"`);
      expect(Number(r.headers.get('content-length'))).toBe(ready!.size);
      const bytes = Buffer.from(await r.arrayBuffer());
      expect(bytes.length).toBe(ready!.size);
      writeFileSync(dir('downloaded.tar.gz'), bytes);
    },
  );

  it('keeps the newest BACKUP_KEEP=2 ready backups and deletes older ones', SLOW, async () => {
    const first = (await list())[0]!;
    const second = await backup();
    const third = await backup();
    expect([second.status, third.status]).toEqual(['ready', 'ready']);
    expect((await list()).map((b) => b.name)).toEqual([third.name, second.name]);
    expect(readdirSync(backupDir()).sort()).toEqual([second.name, third.name].sort());
    const gone = await call('GET', `/api/admin/backups/${first.name}`);
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ statusCode: 404, error: 'BACKUP_NOT_FOUND' });

    const del = await call('DELETE', `/api/admin/backups/${second.name}`);
    expect(del.status).toBe(200);
    expect(del.body.message).toContain(second.name);
    expect((await list()).map((b) => b.name)).toEqual([third.name]);
    expect((await call('DELETE', `/api/admin/backups/${second.name}`)).status).toBe(404);
  });

  it('answers hostile names with a 400 or 404 envelope and never leaves BACKUP_DIR', SLOW, async () => {
    writeFileSync(dir('secret.txt'), 'not a backup');
    // A link with a valid name planted in the folder is not followed, listed or deleted through.
    const planted = 'plinth-backup-2020-01-01T00-00-00-000Z.tar.gz';
    symlinkSync(dir('secret.txt'), path.join(backupDir(), planted));
    const cases: Array<[string, number]> = [
      ['..%2Fsecret.txt', 400],
      ['..%2F..%2F..%2F..%2Fetc%2Fpasswd', 400],
      ['%2Fetc%2Fpasswd', 400],
      ['plinth-backup-2026-11-28T05-30-00-123Z.tar.gz%00', 400],
      ['plinth-backup-2026-11-28T05-30-00-123Z.tar.gz%2F..%2F..%2Fsecret.txt', 400],
      ['.plinth-backup-2026-11-28T05-30-00-123Z.tar.gz.partial', 400],
      ['%2e%2e', 404], // the URL resolves it: /api/admin/, no such route
      ['plinth-backup-2026-11-28T05-30-00-123Z.tar.gz', 404],
      [planted, 404],
    ];
    for (const method of ['GET', 'DELETE']) {
      for (const [name, status] of cases) {
        const r = await call(method, `/api/admin/backups/${name}`);
        expect(r.status, `${method} ${name}`).toBe(status);
        expect(Object.keys(r.body).sort(), `${method} ${name}`).toEqual([
          'error',
          'message',
          'nextActions',
          'statusCode',
        ]);
      }
    }
    expect((await list()).map((b) => b.name)).not.toContain(planted);
    expect(existsSync(dir('secret.txt'))).toBe(true);
    rmSync(path.join(backupDir(), planted));
  });

  it('a downloaded backup is an archive restore accepts, and the restored database has the data', SLOW, async () => {
    const restore = await cli(['restore', dir('downloaded.tar.gz')], { DATA_DIR: dir('restored') });
    expect(restore.out).toMatch(/Restored the backup/);
    expect(restore.out).toMatch(/replays its WAL/);
    expect(restore.code).toBe(0);
    // The restored cluster starts (recovering from the archive's WAL) and holds the row.
    const cluster = await startCluster({ dir: path.join(dir('restored'), 'postgres') });
    const client = new pg.Client({ connectionString: cluster.url(EMBEDDED_DATABASE) });
    try {
      await client.connect();
      expect((await client.query('select body from public.notes')).rows.map((x) => x.body)).toEqual(['kept ✓']);
    } finally {
      await client.end().catch(() => {});
      await cluster.stop();
    }
  });

  it(
    'a stop while one runs removes its temp file; a temp file left by a crash is removed at start and never listed',
    SLOW,
    async () => {
      const started = await call('POST', '/api/admin/backups');
      expect(started.status).toBe(202);
      await stop();
      expect(readdirSync(backupDir()).filter((n) => n.endsWith('.partial'))).toEqual([]);
      const leftover = `.${started.body.name}.partial`;
      writeFileSync(path.join(backupDir(), leftover), 'half an archive');
      t = await startConfiguredApp({ DATA_DIR: dir('src'), BACKUP_KEEP: '2' });
      expect(existsSync(path.join(backupDir(), leftover))).toBe(false);
      const after = await list();
      expect(after.every((b) => b.status === 'ready')).toBe(true);
      expect(after.map((b) => b.name)).not.toContain(`.${started.body.name}.partial`);
    },
  );

  it(
    'a full disk: the backup is failed with a clear error, its temp file removed; it can be deleted',
    SLOW,
    async (ctx) => {
      const tiny = dir('tiny');
      mkdirSync(tiny);
      const mount = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', tiny], { encoding: 'utf8' });
      if (mount.status !== 0) {
        console.warn(
          `skipping the full disk: cannot mount a tmpfs here (${(mount.stderr || mount.error?.message || '').trim()}); run as root or with CAP_SYS_ADMIN`,
        );
        ctx.skip();
      }
      try {
        await stop();
        t = await startConfiguredApp({ DATA_DIR: dir('src'), BACKUP_DIR: tiny });
        const failed = await backup();
        expect(failed.status).toBe('failed');
        expect(failed.error).toMatch(/No space left on the disk of BACKUP_DIR.*partial backup was removed/);
        expect(readdirSync(tiny)).toEqual([]);
        expect((await call('GET', `/api/admin/backups/${failed.name}`)).status).toBe(404);
        expect((await call('DELETE', `/api/admin/backups/${failed.name}`)).status).toBe(200);
        expect(await list()).toEqual([]);
        // The server goes on.
        expect((await sql('select count(*)::int as n from public.notes'))[0].n).toBe(1);
      } finally {
        spawnSync('umount', ['-l', tiny]);
      }
    },
  );
});

describe('backups of a database Plinth does not run itself', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp(backends().at(-1)!);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers every backups endpoint with the 501 BACKUP_UNAVAILABLE of POST /api/admin/backup', SLOW, async () => {
    const streamed = await t.fetch('/api/admin/backup', { method: 'POST', headers: { 'x-api-key': t.adminKey } });
    expect(streamed.status).toBe(501);
    const expected = await streamed.json();
    expect(expected).toMatchObject({ statusCode: 501, error: 'BACKUP_UNAVAILABLE' });
    expect(expected.nextActions).toMatch(/pg_dump -Fc/);
    const name = 'plinth-backup-2026-11-28T05-30-00-123Z.tar.gz';
    for (const [method, p] of [
      ['POST', '/api/admin/backups'],
      ['GET', '/api/admin/backups'],
      ['GET', `/api/admin/backups/${name}`],
      ['DELETE', `/api/admin/backups/${name}`],
    ]) {
      const r = await t.fetch(p!, { method, headers: { 'x-api-key': t.adminKey } });
      expect(r.status, `${method} ${p}`).toBe(501);
      expect(await r.json()).toEqual(expected);
    }
    expect(existsSync(path.join(t.dataDir, 'backups'))).toBe(false);
  });
});
