// Backups of the embedded default: one .tar.gz with the cluster files (a physical copy: the
// npm binaries have no pg_dump), DATA_DIR/storage and a manifest. Offline (the CLI, server
// stopped) or online (a non-exclusive pg_backup_start/stop of the running server plus the WAL
// it needs, as `pg_basebackup -X fetch` does).
import {
  createWriteStream,
  existsSync,
  lstatSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
} from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import pg from 'pg';
import { END_OF_ARCHIVE, entryHeader, fileEntry, memoryEntry } from '../../lib/tar.js';
import { EmbeddedPostgresError } from './binaries.js';
import { alive } from '../../lib/process.js';
import { commandOf } from './supervisor.js';

export const MANIFEST_NAME = 'plinth-backup.json';
export const BACKUP_FORMAT = 1;

export interface BackupManifest {
  format: number;
  /** offline: copied from a stopped cluster; online: pg_backup_start/stop, starts with recovery. */
  kind: 'offline' | 'online';
  postgresMajor: number;
  createdAt: string;
  plinthVersion: string;
  /** 'local': DATA_DIR/storage is in the archive; 's3': objects stay in the bucket. */
  storage: 'local' | 's3';
}

export interface BackupSource {
  /** DATA_DIR: the cluster is DATA_DIR/postgres, local storage DATA_DIR/storage. */
  dataDir: string;
  plinthVersion: string;
  /** False with S3 storage: the objects are not on this disk. */
  includeStorage: boolean;
}

/** The pid of a postgres that runs on `clusterDir` (from postmaster.pid), else null. */
export function runningPostgres(clusterDir: string): number | null {
  const file = path.join(clusterDir, 'postmaster.pid');
  if (!existsSync(file)) return null;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 && alive(pid) && /postgres/.test(commandOf(pid)) ? pid : null;
}

/** Throws when the embedded Postgres of `dataDir` runs (the CLI works on a stopped server only). */
export function assertStopped(dataDir: string): void {
  const pid = runningPostgres(path.join(dataDir, 'postgres'));
  if (pid) {
    throw new EmbeddedPostgresError(
      `The embedded Postgres of ${dataDir} is running (pid ${pid}): Plinth still runs on this DATA_DIR. ` +
        'Stop the server first, or take a backup of the running server with POST /api/admin/backup (admin key).',
    );
  }
}

/** The major version the cluster was made by (its PG_VERSION file). */
export function clusterMajor(clusterDir: string): number {
  const file = path.join(clusterDir, 'PG_VERSION');
  if (!existsSync(file))
    throw new EmbeddedPostgresError(`${clusterDir} holds no Postgres cluster (no PG_VERSION): nothing to back up.`);
  return Number(readFileSync(file, 'utf8').trim());
}

/** Names never copied from a stopped cluster: lock files and sockets of the last run. */
function offlineSkip(rel: string): boolean {
  return rel === 'postmaster.pid' || rel === 'postmaster.opts' || /^\.s\.PGSQL\./.test(rel);
}

/** Directories whose contents pg_basebackup leaves out of a live copy (the directory stays). */
const LIVE_EMPTY_DIRS = new Set([
  'pg_wal',
  'pg_replslot',
  'pg_dynshmem',
  'pg_notify',
  'pg_serial',
  'pg_snapshots',
  'pg_stat_tmp',
  'pg_subtrans',
]);
const LIVE_SKIP_FILES = new Set([
  'postmaster.pid',
  'postmaster.opts',
  'backup_label',
  'backup_label.old',
  'tablespace_map',
  'current_logfiles',
]);

function onlineSkip(rel: string): boolean {
  const parts = rel.split('/');
  const base = parts[parts.length - 1]!;
  if (parts.length === 1 && (LIVE_SKIP_FILES.has(base) || /^\.s\.PGSQL\./.test(base))) return true;
  if (parts.length >= 2 && LIVE_EMPTY_DIRS.has(parts[0]!) && rel !== 'pg_wal/archive_status') return true;
  return base.startsWith('pgsql_tmp') || base === 'pg_internal.init';
}

/** Opens a file for reading; null when it vanished meanwhile (a live cluster removes files). */
function openOrNull(file: string): number | null {
  try {
    return openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

function lstatOrNull(file: string) {
  try {
    return lstatSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Directories and regular files under `root` as archive chunks named `prefix/…`, sorted. */
export function* walk(root: string, prefix: string, skip: (rel: string) => boolean, rel = ''): Generator<Buffer> {
  const dir = path.join(root, rel);
  const st = lstatOrNull(dir);
  if (!st?.isDirectory()) return;
  yield entryHeader({
    name: rel ? `${prefix}/${rel}` : prefix,
    type: 'dir',
    mode: st.mode,
    size: 0,
    mtime: st.mtimeMs,
  });
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  for (const name of names) {
    const childRel = rel ? `${rel}/${name}` : name;
    if (skip(childRel)) continue;
    const full = path.join(root, childRel);
    const cst = lstatOrNull(full);
    if (!cst) continue;
    if (cst.isDirectory()) {
      yield* walk(root, prefix, skip, childRel);
    } else if (cst.isFile()) {
      const fd = openOrNull(full);
      if (fd !== null)
        yield* fileEntry(`${prefix}/${childRel}`, fd, { mode: cst.mode, size: cst.size, mtime: cst.mtimeMs });
    }
  }
}

function manifestEntry(source: BackupSource, kind: BackupManifest['kind']): Generator<Buffer> {
  const manifest: BackupManifest = {
    format: BACKUP_FORMAT,
    kind,
    postgresMajor: clusterMajor(path.join(source.dataDir, 'postgres')),
    createdAt: new Date().toISOString(),
    plinthVersion: source.plinthVersion,
    storage: source.includeStorage ? 'local' : 's3',
  };
  return memoryEntry(MANIFEST_NAME, Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`), 0o644);
}

/** The archive of a stopped cluster: manifest, postgres/ (with all of pg_wal), storage/. */
export function* offlineArchive(source: BackupSource): Generator<Buffer> {
  yield* manifestEntry(source, 'offline');
  yield* walk(path.join(source.dataDir, 'postgres'), 'postgres', offlineSkip);
  if (source.includeStorage) yield* walk(path.join(source.dataDir, 'storage'), 'storage', () => false);
  yield END_OF_ARCHIVE;
}

/** Writes the offline archive to `file` (through a temp file: never half an archive under that name). */
export async function writeOfflineBackup(source: BackupSource & { file: string }): Promise<void> {
  assertStopped(source.dataDir);
  const tmp = `${source.file}.partial-${process.pid}`;
  try {
    await pipeline(Readable.from(offlineArchive(source)), createGzip(), createWriteStream(tmp, { mode: 0o600 }));
    renameSync(tmp, source.file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

const WAL_FILE = /^[0-9A-F]{24}$|^[0-9A-F]{8}\.history$/;

/**
 * The archive of the RUNNING cluster reached at `url` (a superuser connection): a temporary
 * replication slot keeps the WAL from before the start checkpoint, pg_backup_start, the files,
 * pg_backup_stop, backup_label (+ tablespace_map), then the WAL segments. One dedicated
 * session throughout; an abandoned copy (client gone) stops the backup and drops the slot.
 */
export async function* onlineArchive(source: BackupSource & { url: string }): AsyncGenerator<Buffer> {
  const client = new pg.Client({ connectionString: source.url });
  await client.connect();
  let running = false;
  try {
    await client.query('select pg_create_physical_replication_slot($1, true, true)', [
      `plinth_backup_${process.pid}_${Date.now()}`,
    ]);
    await client.query(`select pg_backup_start('plinth', true)`);
    running = true;
    const clusterDir = path.join(source.dataDir, 'postgres');
    yield* manifestEntry(source, 'online');
    yield* walk(clusterDir, 'postgres', onlineSkip);
    if (source.includeStorage) yield* walk(path.join(source.dataDir, 'storage'), 'storage', () => false);
    const { rows } = await client.query<{ labelfile: string; spcmapfile: string | null }>(
      'select labelfile, spcmapfile from pg_backup_stop(false)',
    );
    running = false;
    yield* memoryEntry('postgres/backup_label', Buffer.from(rows[0]!.labelfile));
    if (rows[0]!.spcmapfile) yield* memoryEntry('postgres/tablespace_map', Buffer.from(rows[0]!.spcmapfile));
    const wal = path.join(clusterDir, 'pg_wal');
    for (const name of readdirSync(wal).sort()) {
      if (!WAL_FILE.test(name)) continue;
      const st = lstatOrNull(path.join(wal, name));
      const fd = st?.isFile() ? openOrNull(path.join(wal, name)) : null;
      if (st && fd !== null)
        yield* fileEntry(`postgres/pg_wal/${name}`, fd, { mode: st.mode, size: st.size, mtime: st.mtimeMs });
    }
    yield END_OF_ARCHIVE;
  } finally {
    if (running) await client.query('select pg_backup_stop(false)').catch(() => {});
    await client.end().catch(() => {});
  }
}
