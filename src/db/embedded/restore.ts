// Restores a backup archive (backup.ts) into DATA_DIR: checks the manifest (same Postgres
// major), unpacks into a temp folder beside the data, then renames it into place. Existing
// data is never deleted: --force moves it aside.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  createReadStream,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  utimesSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { createGunzip } from 'node:zlib';
import { readTar, type TarEntry } from '../../lib/tar.js';
import { EmbeddedPostgresError, locateBinaries } from './binaries.js';
import { BACKUP_FORMAT, MANIFEST_NAME, assertStopped, type BackupManifest } from './backup.js';
import { chownTree, resolveRunAs } from './cluster.js';

/** The major version of the postgres binaries Plinth runs (`postgres --version`). */
export async function binariesMajor(): Promise<number> {
  const bins = await locateBinaries();
  const out = execFileSync(bins.postgres, ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString();
  const m = /(\d+)(?:\.\d+)?/.exec(out.replace(/^[^)]*\)/, ''));
  if (!m) throw new EmbeddedPostgresError(`Cannot read the Postgres version from "${out.trim()}".`);
  return Number(m[1]);
}

function checkManifest(m: BackupManifest, major: number): void {
  if (m.format !== BACKUP_FORMAT) {
    throw new EmbeddedPostgresError(
      `The archive has backup format ${m.format}; this Plinth reads format ${BACKUP_FORMAT}. Restore it with the Plinth version that made it (${m.plinthVersion}).`,
    );
  }
  if (m.postgresMajor !== major) {
    throw new EmbeddedPostgresError(
      `The archive holds a Postgres ${m.postgresMajor} cluster and this Plinth runs Postgres ${major}: a physical backup restores into the same major version only. ` +
        `Restore it with a Plinth that ships Postgres ${m.postgresMajor}, then move the data with pg_dump/pg_restore.`,
    );
  }
}

/** A safe path inside `root` for an archive name under postgres/ or storage/, else an error. */
function target(root: string, name: string): string {
  const parts = name.split('/');
  if (!['postgres', 'storage'].includes(parts[0]!) || parts.some((p) => p === '..' || p === '' || p === '.')) {
    throw new EmbeddedPostgresError(
      `The archive holds an unexpected entry "${name}": not a Plinth backup, nothing restored.`,
    );
  }
  return path.join(root, ...parts);
}

/** Unpacks `file` into `root`; returns the manifest (the first entry, checked before anything else). */
async function unpack(file: string, root: string, major: number): Promise<BackupManifest> {
  let manifest: BackupManifest | null = null;
  let manifestBytes: Buffer[] | null = null;
  let fd: number | null = null;
  let current: TarEntry | null = null;
  const dirs: TarEntry[] = [];
  await readTar(createReadStream(file).pipe(createGunzip()), {
    entry(e) {
      if (!manifest && e.name !== MANIFEST_NAME)
        throw new EmbeddedPostgresError(`${file} is not a Plinth backup: it does not start with ${MANIFEST_NAME}.`);
      current = e;
      if (e.name === MANIFEST_NAME) {
        manifestBytes = [];
        return;
      }
      const dest = target(root, e.name);
      if (e.type === 'dir') {
        mkdirSync(dest, { recursive: true, mode: 0o700 });
        dirs.push(e);
        return;
      }
      mkdirSync(path.dirname(dest), { recursive: true, mode: 0o700 });
      fd = openSync(dest, 'w', e.mode & 0o7777);
    },
    data(chunk) {
      if (manifestBytes) manifestBytes.push(Buffer.from(chunk));
      else if (fd !== null) writeSync(fd, chunk);
    },
    end() {
      if (manifestBytes) {
        manifest = JSON.parse(Buffer.concat(manifestBytes).toString('utf8')) as BackupManifest;
        manifestBytes = null;
        checkManifest(manifest, major);
        return;
      }
      if (fd !== null) closeSync(fd);
      fd = null;
      const e = current!;
      utimesSync(target(root, e.name), e.mtime / 1000, e.mtime / 1000);
    },
  });
  if (!manifest) throw new EmbeddedPostgresError(`${file} is not a Plinth backup (no ${MANIFEST_NAME}).`);
  // Directory modes last: postgres insists on 0700/0750 for its data dir.
  for (const d of dirs.reverse()) chmodSync(target(root, d.name), d.mode & 0o7777);
  return manifest;
}

function nonEmpty(dir: string): boolean {
  return existsSync(dir) && readdirSync(dir).length > 0;
}

export interface RestoreResult {
  manifest: BackupManifest;
  /** Where --force moved the data that was there before. */
  movedAside: string[];
}

/**
 * Restores `file` into `dataDir` (postgres/ and, when in the archive, storage/). Refuses when
 * the server runs, or when data exists and `force` is not set; with `force` the old folders
 * are renamed to `<name>.before-restore-<time>`.
 */
export async function restoreBackup(opts: { dataDir: string; file: string; force: boolean }): Promise<RestoreResult> {
  const dataDir = path.resolve(opts.dataDir);
  assertStopped(dataDir);
  if (!existsSync(opts.file)) throw new EmbeddedPostgresError(`No backup file at ${opts.file}.`);
  const existing = ['postgres', 'storage'].filter((d) => nonEmpty(path.join(dataDir, d)));
  if (existing.length && !opts.force) {
    throw new EmbeddedPostgresError(
      `${dataDir} already holds data (${existing.join(', ')}). Restore into an empty DATA_DIR, or add --force to move the current data aside (nothing is deleted).`,
    );
  }
  // Created here: removed again when the restore fails, so a failed restore leaves DATA_DIR
  // exactly as it was, down to whether it exists.
  const created = mkdirSync(dataDir, { recursive: true });
  const tmp = path.join(dataDir, `.restore-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { mode: 0o700 });
  try {
    const manifest = await unpack(opts.file, tmp, await binariesMajor());
    if (!existsSync(path.join(tmp, 'postgres', 'PG_VERSION')))
      throw new EmbeddedPostgresError(`${opts.file} holds no Postgres cluster: nothing restored.`);
    const movedAside = swapIn(dataDir, tmp);
    const user = resolveRunAs();
    if (user) chownTree(path.join(dataDir, 'postgres'), user);
    return { manifest, movedAside };
  } catch (err) {
    if (created) rmSync(created, { recursive: true, force: true });
    throw err;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * Renames the unpacked folders of `tmp` into `dataDir`, the ones there before aside; when a
 * rename fails, the ones done are undone, so the data dir is as it was.
 */
function swapIn(dataDir: string, tmp: string): string[] {
  const done: Array<[from: string, to: string]> = [];
  const move = (from: string, to: string) => {
    renameSync(from, to);
    done.push([from, to]);
  };
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  try {
    for (const name of ['postgres', 'storage']) {
      const dest = path.join(dataDir, name);
      if (!existsSync(path.join(tmp, name))) continue;
      if (existsSync(dest)) move(dest, `${dest}.before-restore-${stamp}`);
      move(path.join(tmp, name), dest);
    }
  } catch (err) {
    for (const [from, to] of done.reverse()) renameSync(to, from);
    throw err;
  }
  return done.filter(([from]) => !from.startsWith(tmp)).map(([, to]) => to);
}
