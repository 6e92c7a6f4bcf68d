// Backups of the embedded default, restored into fresh data dirs and checked through the API:
// (a) `plinth backup` of a stopped DATA_DIR, (b) POST /api/admin/backup of a running server
// taken while writes run (the restore starts by recovery from backup_label), (c) both with S3
// storage (a real s3rver): the archives hold the database only, the objects stay in the bucket.
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  createReadStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createGunzip } from 'node:zlib';
import { GetObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTar } from '../../src/lib/tar.js';
import { startConfiguredApp, type ConfiguredApp } from '../helpers/configured-app.js';
import { startS3, type TestS3 } from '../storage/s3server.js';
import { cli } from '../helpers/cli.js';

describe('backup and restore of the embedded database and local storage', () => {
  let root: string;
  let t: ConfiguredApp | null = null;
  let adminKey: string;
  let anonKey: string;
  const password = 'correct horse battery';
  const email = 'ada@example.com';
  const bytes = randomBytes(200_000);
  const admin = () => ({ 'x-api-key': adminKey, 'content-type': 'application/json' });
  const dir = (name: string) => path.join(root, name);
  /** The status, with the body read (an unread body keeps the connection busy and slows close()). */
  const status = async (r: Promise<Response>) => {
    const res = await r;
    await res.arrayBuffer();
    return res.status;
  };
  const sql = async (query: string) => {
    const r = await t!.fetch('/api/database/sql', {
      method: 'POST',
      headers: admin(),
      body: JSON.stringify({ query }),
    });
    if (r.status !== 200) throw new Error(`SQL failed (${r.status}): ${await r.text()}`);
    return (await r.json()) as { rows: any[] };
  };

  /** Stops the server `t`; open keep-alive sockets of the test's fetches are closed first. */
  const stop = async () => {
    const x = t!;
    t = null;
    mark('app.close');
    x.app.server.closeAllConnections();
    await x.app.close();
    mark('deps.close');
    await x.deps.close();
    mark('closed');
  };
  /** Everything made in the source data dir is there, and works, on the server `t`. */
  async function expectEverything(): Promise<void> {
    expect((await (await t!.fetch('/api/health?checks=true')).json()).checks.database).toEqual({
      status: 'ok',
      engine: 'embedded',
    });
    expect(t!.deps.credentials.anonKey).toBe(anonKey);
    expect((await sql('select body from public.notes order by id')).rows.map((r) => r.body)).toEqual([
      'hello ünïcode',
      'secret',
      'third',
    ]);
    const asAnon = await t!.fetch('/api/database/records/notes?order=id.asc', { headers: { apikey: anonKey } });
    expect(asAnon.status).toBe(200);
    expect((await asAnon.json()).map((r: any) => r.body)).toEqual(['hello ünïcode', 'third']);
    expect((await sql('select public.add_one(41) as v')).rows).toEqual([{ v: 42 }]);
    expect(
      await status(
        t!.fetch('/api/auth/signin', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email, password }),
        }),
      ),
    ).toBe(200);
    const fn = await t!.fetch('/functions/hello');
    expect(fn.status).toBe(200);
    expect(await fn.json()).toEqual({ greeting: 'hi there' });
    const file = await t!.fetch('/api/storage/buckets/docs/objects/blob.bin');
    expect(file.status).toBe(200);
    expect(Buffer.from(await file.arrayBuffer()).equals(bytes)).toBe(true);
  }

  const mark = (what: string) => process.env.DEBUG_BACKUP && console.log(new Date().toISOString(), what);
  beforeAll(async () => {
    mark('begin');
    root = mkdtempSync(path.join(tmpdir(), 'plinth-backup-'));
    chmodSync(root, 0o711); // postgres runs as the user plinth when the tests run as root
    t = await startConfiguredApp({ DATA_DIR: dir('src') });
    mark('started');
    adminKey = t.deps.generatedAdminKey!;
    anonKey = t.deps.credentials.anonKey;
    await sql(`create table public.notes (id serial primary key, body text not null, public boolean not null default false);
      alter table public.notes enable row level security;
      grant select on public.notes to anon, authenticated;
      create policy notes_public on public.notes for select to anon, authenticated using (public);
      insert into public.notes (body, public) values ('hello ünïcode', true), ('secret', false), ('third', true);
      create function public.add_one(x int) returns int language sql immutable as 'select x + 1';
      create table public.ledger (id int primary key);
      create table public.ledger_copy (id int primary key references public.ledger);`);
    mark('sql');
    expect(
      await status(
        t.fetch('/api/auth/signup', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email, password }),
        }),
      ),
    ).toBe(200);
    mark('signup');
    const code = 'export default () => Response.json({ greeting: Deno.env.get("GREETING") ?? null })';
    expect(
      await status(
        t.fetch('/api/functions', { method: 'POST', headers: admin(), body: JSON.stringify({ name: 'hello', code }) }),
      ),
    ).toBe(201);
    expect(
      await status(
        t.fetch('/api/secrets/GREETING', {
          method: 'PUT',
          headers: admin(),
          body: JSON.stringify({ value: 'hi there' }),
        }),
      ),
    ).toBe(201);
    expect(
      await status(
        t.fetch('/api/storage/buckets', {
          method: 'POST',
          headers: admin(),
          body: JSON.stringify({ bucketName: 'docs', isPublic: true }),
        }),
      ),
    ).toBe(201);
    mark('fn');
    const fd = new FormData();
    fd.append('file', new Blob([bytes], { type: 'application/octet-stream' }), 'blob.bin');
    expect(
      await status(
        t.fetch('/api/storage/buckets/docs/objects/blob.bin', {
          method: 'PUT',
          headers: { 'x-api-key': adminKey },
          body: fd,
        }),
      ),
    ).toBe(200);
    mark('upload');
    await expectEverything();
    await stop();
  });
  afterAll(async () => {
    mark('afterAll');
    if (t) await stop();
    rmSync(root, { recursive: true, force: true });
    mark('afterAll done');
  });

  it('(a) plinth backup of the stopped data dir, restore into a fresh one: everything there', async () => {
    const archive = dir('offline.tar.gz');
    const backup = await cli(['backup', archive], { DATA_DIR: dir('src') });
    expect(backup.out).toMatch(/Backup written/);
    expect(backup.code).toBe(0);
    const restore = await cli(['restore', archive], { DATA_DIR: dir('a') });
    expect(restore.out).toMatch(/Restored the backup/);
    expect(restore.code).toBe(0);
    // Never over existing data without --force; --force keeps the old data aside.
    const again = await cli(['restore', archive], { DATA_DIR: dir('a') });
    expect(again.code).toBe(1);
    expect(again.out).toMatch(/already holds data \(postgres, storage\).*--force/);
    const forced = await cli(['restore', archive, '--force'], { DATA_DIR: dir('a') });
    expect(forced.code).toBe(0);
    expect(readdirSync(dir('a')).filter((e) => /^(postgres|storage)\.before-restore-/.test(e))).toHaveLength(2);

    // CLI commands speak in plain lines on stderr, the database's events too (no JSON log lines).
    const show = await cli(['keys', 'show'], { DATA_DIR: dir('a'), LOG_LEVEL: 'info' });
    expect(show.code).toBe(0);
    expect(show.out).toMatch(/^anon key: anon_/m);
    expect(show.out).toMatch(/^database: postgres ready/m);
    expect(show.out).not.toMatch(/^\{/m);

    t = await startConfiguredApp({ DATA_DIR: dir('a') });
    expect(t.deps.generatedAdminKey).toBeNull();
    mark('restored ok');
    await expectEverything();
    await stop();
  });

  it('(b) POST /api/admin/backup of the running server while writes run: restore recovers to a consistent state', async () => {
    t = await startConfiguredApp({ DATA_DIR: dir('src') });
    // The CLI refuses while the server runs on that DATA_DIR.
    const refused = await cli(['backup', dir('nope.tar.gz')], { DATA_DIR: dir('src') });
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/is running.*Stop the server first/s);
    expect(existsSync(dir('nope.tar.gz'))).toBe(false);
    expect(await status(t.fetch('/api/admin/backup', { method: 'POST', headers: { apikey: anonKey } }))).toBe(403);

    // Two writers: each write puts the same id in two tables in one statement.
    const acked: number[] = [];
    let next = 1;
    let halt = false;
    const writer = async () => {
      while (!halt) {
        const id = next++;
        await sql(
          `with a as (insert into public.ledger values (${id}) returning id) insert into public.ledger_copy select id from a`,
        );
        acked.push(id);
      }
    };
    const writers = [writer(), writer()];
    while (acked.length < 20) await new Promise((r) => setTimeout(r, 10));
    const ackedBefore = [...acked];
    const r = await t.fetch('/api/admin/backup', { method: 'POST', headers: { 'x-api-key': adminKey } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/gzip');
    const archive = Buffer.from(await r.arrayBuffer());
    halt = true;
    await Promise.all(writers);
    await stop();
    writeFileSync(dir('online.tar.gz'), archive);
    // A download cut short is refused and leaves nothing behind.
    writeFileSync(dir('cut.tar.gz'), archive.subarray(0, archive.length >> 1));
    const cut = await cli(['restore', dir('cut.tar.gz')], { DATA_DIR: dir('c') });
    expect(cut.code).toBe(1);
    expect(cut.out).toMatch(/ends early|unexpected end/);
    expect(existsSync(dir('c'))).toBe(false); // not even an empty DATA_DIR is left
    // Over existing data with --force: every file stays where it was, nothing is moved aside.
    const listing = (d: string) => readdirSync(d, { recursive: true }).map(String).sort();
    const before = listing(dir('src'));
    const cutForced = await cli(['restore', dir('cut.tar.gz'), '--force'], { DATA_DIR: dir('src') });
    expect(cutForced.code).toBe(1);
    expect(listing(dir('src'))).toEqual(before);

    const restore = await cli(['restore', dir('online.tar.gz')], { DATA_DIR: dir('b') });
    expect(restore.out).toMatch(/replays its WAL/);
    expect(restore.code).toBe(0);
    expect(existsSync(path.join(dir('b'), 'postgres', 'backup_label'))).toBe(true);
    t = await startConfiguredApp({ DATA_DIR: dir('b') });
    // Recovery ran from the backup label and finished (postgres renames the label when done).
    expect(existsSync(path.join(dir('b'), 'postgres', 'backup_label'))).toBe(false);
    expect(existsSync(path.join(dir('b'), 'postgres', 'backup_label.old'))).toBe(true);
    await expectEverything();
    const ledger = (await sql('select id from public.ledger order by id')).rows.map((x) => x.id);
    const copy = (await sql('select id from public.ledger_copy order by id')).rows.map((x) => x.id);
    expect(copy).toEqual(ledger);
    mark(
      `writes answered before the backup ${ackedBefore.length}, in the archive ${ledger.length}, answered in all ${acked.length}`,
    );
    for (const id of ackedBefore) expect(ledger).toContain(id);
    // Writes made while the files were copied are there too (replayed from the archive's WAL).
    expect(ledger.length).toBeGreaterThan(ackedBefore.length);
    expect(ledger.length).toBeLessThanOrEqual(acked.length + 2);
    // The restored server takes writes again.
    await sql('insert into public.ledger values (1000000)');
  });

  it('a server Postgres (DATABASE_URL) or PGlite gets a 501 envelope pointing at pg_dump; the CLI says the same', async () => {
    if (t) await stop();
    t = await startConfiguredApp({ DATA_DIR: dir('lite'), DATABASE_URL: 'pglite://' });
    adminKey = t.deps.generatedAdminKey!;
    const r = await t.fetch('/api/admin/backup', { method: 'POST', headers: { 'x-api-key': adminKey } });
    expect(r.status).toBe(501);
    const body = await r.json();
    expect(body).toMatchObject({ statusCode: 501, error: 'BACKUP_UNAVAILABLE' });
    expect(body.nextActions).toMatch(/DATA_DIR/);
    const out = await cli(['backup', dir('x.tar.gz')], {
      DATA_DIR: dir('lite'),
      DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none',
    });
    expect(out.code).toBe(1);
    expect(out.out).toMatch(/pg_dump -Fc/);
  });
});

/** The entry names of a backup archive and its manifest (read with the repo's own tar reader). */
async function archiveContents(file: string): Promise<{ names: string[]; manifest: Record<string, unknown> }> {
  const names: string[] = [];
  let manifest: Buffer[] | null = null;
  const manifestParts: Buffer[] = [];
  await readTar(createReadStream(file).pipe(createGunzip()), {
    entry(e) {
      names.push(e.name);
      manifest = e.name === 'plinth-backup.json' ? manifestParts : null;
    },
    data(chunk) {
      manifest?.push(Buffer.from(chunk));
    },
    end() {
      manifest = null;
    },
  });
  return { names, manifest: JSON.parse(Buffer.concat(manifestParts).toString('utf8')) };
}

describe('backup and restore with S3 storage (real s3rver): the database only, the objects stay in the bucket', () => {
  let root: string;
  let s3: TestS3 | null = null;
  let t: ConfiguredApp | null = null;
  const dir = (name: string) => path.join(root, name);
  const stop = async () => {
    const x = t!;
    t = null;
    await x.close();
  };
  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'plinth-backup-s3-'));
    chmodSync(root, 0o711); // postgres runs as the user plinth when the tests run as root
    s3 = await startS3();
  });
  afterAll(async () => {
    if (t) await stop();
    if (s3) await s3.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('admin backup and CLI backup leave storage out; a restore serves the row, the user and the object bytes from S3', async () => {
    const env = s3!.env;
    const email = 'grace@example.com';
    const password = 'correct horse battery';
    const bytes = randomBytes(200_000); // larger than any cached body; a restored server is a fresh process anyway
    const { region, endpoint, forcePathStyle, accessKeyId, secretAccessKey } = s3!.config;
    // A client of its own to look into the bucket directly (not through Plinth).
    const raw = new S3Client({ region, endpoint, forcePathStyle, credentials: { accessKeyId, secretAccessKey } });
    try {
      // 1. A server on a fresh DATA_DIR: embedded database, S3 storage.
      t = await startConfiguredApp({ DATA_DIR: dir('src'), ...env });
      expect(t.deps.config.storage.s3?.bucket).toBe(s3!.bucket);
      const adminKey = t.deps.generatedAdminKey!;
      const admin = { 'x-api-key': adminKey, 'content-type': 'application/json' };
      const sql = async (app: ConfiguredApp, query: string) => {
        const r = await app.fetch('/api/database/sql', {
          method: 'POST',
          headers: admin,
          body: JSON.stringify({ query }),
        });
        expect(r.status, await r.clone().text()).toBe(200);
        return ((await r.json()) as { rows: any[] }).rows;
      };
      await sql(
        t,
        `create table public.notes (id serial primary key, body text not null); insert into public.notes (body) values ('kept in the archive ✓');`,
      );
      const signup = await t.fetch('/api/auth/signup', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password }),
      });
      expect(signup.status).toBe(200);
      await signup.arrayBuffer();
      const bucket = await t.fetch('/api/storage/buckets', {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ bucketName: 'docs', isPublic: true }),
      });
      expect(bucket.status).toBe(201);
      await bucket.arrayBuffer();
      const put = await t.fetch('/api/storage/buckets/docs/objects/blob.bin', {
        method: 'PUT',
        headers: { 'x-api-key': adminKey, 'content-type': 'application/octet-stream' },
        body: bytes,
      });
      expect(put.status, await put.clone().text()).toBe(200);
      await put.arrayBuffer();
      // The object is in the S3 bucket (key "<plinth bucket>/<key>"), not under DATA_DIR.
      const head = await raw.send(new HeadObjectCommand({ Bucket: s3!.bucket, Key: 'docs/blob.bin' }));
      expect(head.ContentLength).toBe(bytes.length);
      expect(existsSync(path.join(dir('src'), 'storage'))).toBe(false);
      // A leftover of local storage (as after a move to S3): with S3 configured it stays out of both archives.
      mkdirSync(path.join(dir('src'), 'storage', 'docs'), { recursive: true });
      writeFileSync(path.join(dir('src'), 'storage', 'docs', 'old.bin'), 'from the days of local storage');

      // 2a. POST /api/admin/backup of the running server: the database, no storage/.
      const r = await t.fetch('/api/admin/backup', { method: 'POST', headers: { 'x-api-key': adminKey } });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe('application/gzip');
      expect(r.headers.get('x-plinth-backup-storage')).toBe('s3 (not included)');
      writeFileSync(dir('online.tar.gz'), Buffer.from(await r.arrayBuffer()));
      await stop();
      const online = await archiveContents(dir('online.tar.gz'));
      expect(online.manifest).toMatchObject({ kind: 'online', storage: 's3' });
      expect(online.names).toContain('postgres/PG_VERSION');
      expect(online.names).toContain('postgres/backup_label');
      expect(online.names.filter((n) => n === 'storage' || n.startsWith('storage/'))).toEqual([]);

      // 2b. The CLI backup of the stopped data dir, with the S3 env: the S3 note, exit 0.
      const backup = await cli(['backup', dir('offline.tar.gz')], { DATA_DIR: dir('src'), ...env });
      expect(backup.out).toMatch(/Backup written to .*\(database of /);
      expect(backup.out).toContain(
        `Storage is S3 (bucket ${s3!.bucket}): back it up with the provider's versioning or "aws s3 sync".`,
      );
      expect(backup.code).toBe(0);
      const offline = await archiveContents(dir('offline.tar.gz'));
      expect(offline.manifest).toMatchObject({ kind: 'offline', storage: 's3' });
      expect(offline.names).toContain('postgres/PG_VERSION');
      expect(offline.names.filter((n) => n === 'storage' || n.startsWith('storage/'))).toEqual([]);

      // 3. Each archive restored into a fresh DATA_DIR; a server on it with the same S3 env
      // serves the row, signs the user in and answers the object's bytes, read from S3.
      for (const [archive, target, kind] of [
        [dir('offline.tar.gz'), dir('restored-offline'), 'offline'],
        [dir('online.tar.gz'), dir('restored-online'), 'online'],
      ] as const) {
        const restore = await cli(['restore', archive], { DATA_DIR: target, ...env });
        expect(restore.out).toMatch(/Restored the backup/);
        expect(restore.out).toContain('The archive holds no storage objects (they live in S3).');
        if (kind === 'online') expect(restore.out).toMatch(/replays its WAL/);
        expect(restore.code).toBe(0);
        expect(existsSync(path.join(target, 'postgres', 'PG_VERSION'))).toBe(true);
        expect(existsSync(path.join(target, 'storage'))).toBe(false);

        t = await startConfiguredApp({ DATA_DIR: target, ...env });
        expect(t.deps.generatedAdminKey).toBeNull(); // the source's keys came back with the database
        expect((await (await t.fetch('/api/health?checks=true')).json()).checks.database).toEqual({
          status: 'ok',
          engine: 'embedded',
        });
        expect((await sql(t, 'select body from public.notes order by id')).map((x) => x.body)).toEqual([
          'kept in the archive ✓',
        ]);
        const signin = await t.fetch('/api/auth/signin', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email, password }),
        });
        expect(signin.status).toBe(200);
        await signin.arrayBuffer();
        const file = await t.fetch('/api/storage/buckets/docs/objects/blob.bin');
        expect(file.status).toBe(200);
        expect(Buffer.from(await file.arrayBuffer()).equals(bytes)).toBe(true);
        await stop();
      }

      // The bucket was not touched by backup or restore: the same object, the same bytes.
      const after = await raw.send(new GetObjectCommand({ Bucket: s3!.bucket, Key: 'docs/blob.bin' }));
      expect(after.ETag).toBe(head.ETag);
      expect(after.LastModified?.getTime()).toBe(head.LastModified?.getTime());
      expect(Buffer.from(await after.Body!.transformToByteArray()).equals(bytes)).toBe(true);
    } finally {
      raw.destroy();
    }
  }, 180_000);
});
