// Backups of the running server: the online archive of the embedded Postgres (and local
// storage) that POST /api/admin/backup streams, and the same archive kept on the server in
// BACKUP_DIR: made in the background one at a time, written under a temp name and renamed
// when whole, listed, downloaded, deleted, the newest BACKUP_KEEP ready ones kept.
import {
  closeSync,
  constants,
  createWriteStream,
  fsyncSync,
  mkdirSync,
  lstatSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { AppError } from '../errors/index.js';
import { onlineArchive, type BackupSource } from '../db/embedded/backup.js';
import type { LogWriter } from '../logs/types.js';
import type { Config } from '../config/index.js';
import type { Db } from '../db/types.js';
import type { EmbeddedCluster } from '../db/embedded/index.js';

export type BackupStatus = 'running' | 'ready' | 'failed';

/** A backup kept on the server, as GET /api/admin/backups lists it. */
export interface KeptBackup {
  name: string;
  /** Bytes written so far while running; 0 when failed. */
  size: number;
  createdAt: string;
  status: BackupStatus;
  /** Why it failed (status failed only). */
  error?: string;
}

/** Names the server gives its backups: the UTC start time, e.g. plinth-backup-2026-11-28T05-30-00-123Z.tar.gz. */
export const BACKUP_NAME_PATTERN = '^plinth-backup-\\d{4}-\\d{2}-\\d{2}T\\d{2}-\\d{2}-\\d{2}-\\d{3}Z\\.tar\\.gz$';
const NAME = new RegExp(BACKUP_NAME_PATTERN);
/** The temp file of a backup being written: `.<name>.partial`, never listed, removed at start. */
const PARTIAL = /^\.plinth-backup-.*\.partial$/;

export const backupName = (at: Date) => `plinth-backup-${at.toISOString().replace(/[:.]/g, '-')}.tar.gz`;

/** The start time a backup's name carries. */
function nameTime(name: string): string {
  const m = /(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})-(\d{3})Z/.exec(name)!;
  return `${m[1]}T${m[2]}:${m[3]}:${m[4]}.${m[5]}Z`;
}

/** The 501 of a database Plinth does not run itself: it cannot copy its files. */
export function backupUnavailable(kind: string): AppError {
  return new AppError('BACKUP_UNAVAILABLE', {
    message: `This server's database is ${kind === 'pglite' ? 'PGlite (DATABASE_URL=pglite://)' : 'a Postgres server (DATABASE_URL)'}, not the embedded Postgres: Plinth cannot copy its files.`,
    nextActions:
      kind === 'pglite'
        ? 'Stop the server and copy DATA_DIR, or move to the embedded default (unset DATABASE_URL) and use this endpoint.'
        : 'Back the database up with "pg_dump -Fc -f plinth.dump $DATABASE_URL" (restore with pg_restore); for S3 storage use the provider\'s versioning or "aws s3 sync". README, Backups.',
  });
}

/** What a failed backup says: a full disk in plain words, else the error's own message. */
function failure(err: unknown, dir: string): string {
  const code = (err as { code?: string } | null)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT')
    return `No space left on the disk of BACKUP_DIR (${dir}): the partial backup was removed. Free space there or set BACKUP_DIR to a larger disk, then try again.`;
  return `The backup failed: ${err instanceof Error ? err.message : String(err)}`;
}

export interface BackupOptions {
  /** The embedded cluster to copy (its superuser URL), or null on a server Postgres or PGlite. */
  source: (BackupSource & { url: string }) | null;
  /** The database engine (`kind` of the Db), for the 501's wording. */
  kind: string;
  dir: string;
  keep: number;
  logs: LogWriter;
}

/** The backups of this server: of its embedded cluster when it runs one (`db.cluster`). */
export function createBackups(config: Readonly<Config>, db: Db, version: string, logs: LogWriter): BackupService {
  const cluster = (db as { cluster?: EmbeddedCluster }).cluster;
  const source = cluster
    ? {
        dataDir: config.dataDir,
        plinthVersion: version,
        includeStorage: !config.storage.s3,
        url: cluster.url('postgres'),
      }
    : null;
  return new BackupService({ source, kind: db.kind, dir: config.backups.dir, keep: config.backups.keep, logs });
}

export class BackupService {
  private running: { entry: KeptBackup; done: Promise<void>; abort: AbortController } | null = null;
  /** Failed backups since this start (their temp files are gone), until deleted. */
  private readonly failed = new Map<string, KeptBackup>();

  constructor(private readonly opts: BackupOptions) {
    this.sweep();
  }

  /** Whether the archive leaves storage out (S3: the objects stay in the bucket). */
  get storage(): 'local' | 's3' {
    return this.opts.source?.includeStorage === false ? 's3' : 'local';
  }

  /** The online archive (uncompressed tar chunks) of the running server; 501 when Plinth does not run the database. */
  archive(): AsyncGenerator<Buffer> {
    return onlineArchive(this.source());
  }

  /** Starts a kept backup in the background; 409 while one is being made. */
  start(): KeptBackup {
    const chunks = this.archive();
    if (this.running) throw new AppError('BACKUP_RUNNING');
    const at = new Date();
    const entry: KeptBackup = { name: backupName(at), size: 0, createdAt: at.toISOString(), status: 'running' };
    const abort = new AbortController();
    this.running = { entry, abort, done: this.write(entry, chunks, abort.signal) };
    return { ...entry };
  }

  /** Every backup on the server, newest first: the one being made, the ready ones, the failed ones. */
  list(): KeptBackup[] {
    this.source();
    const all: KeptBackup[] = [...this.failed.values()];
    if (this.running) all.push({ ...this.running.entry, size: this.sizeOf(this.temp(this.running.entry.name)) ?? 0 });
    for (const name of this.readyNames()) {
      const size = this.sizeOf(this.file(name));
      if (size !== null) all.push({ name, size, createdAt: nameTime(name), status: 'ready' });
    }
    return all.sort((a, b) => (a.name < b.name ? 1 : a.name > b.name ? -1 : 0));
  }

  /** A ready backup opened for reading: its bytes as a stream and its size. */
  async open(name: string): Promise<{ name: string; size: number; stream: NodeJS.ReadableStream }> {
    this.check(name);
    // O_NOFOLLOW: only the server's own file, never a link planted in the folder.
    const handle = await open(this.file(name), constants.O_RDONLY | constants.O_NOFOLLOW).catch(
      (err: NodeJS.ErrnoException) => {
        throw ['ENOENT', 'ELOOP'].includes(err.code ?? '') ? new AppError('BACKUP_NOT_FOUND') : err;
      },
    );
    const st = await handle.stat();
    if (!st.isFile()) {
      await handle.close();
      throw new AppError('BACKUP_NOT_FOUND');
    }
    return { name, size: st.size, stream: handle.createReadStream() };
  }

  /** Deletes a ready or failed backup; 409 for the one being made. */
  remove(name: string): void {
    this.check(name);
    if (this.failed.delete(name)) return;
    try {
      if (!lstatSync(this.file(name)).isFile()) throw new AppError('BACKUP_NOT_FOUND');
      rmSync(this.file(name));
    } catch (err) {
      throw (err as NodeJS.ErrnoException).code === 'ENOENT' ? new AppError('BACKUP_NOT_FOUND') : err;
    }
  }

  /** Stops a backup being made (its temp file is removed) and waits for it. */
  async close(): Promise<void> {
    const r = this.running;
    if (!r) return;
    r.abort.abort();
    await r.done;
  }

  /** Resolves when no backup is being made. */
  async idle(): Promise<void> {
    await this.running?.done;
  }

  /** The cluster to copy; 501 on a database Plinth does not run itself (every backup endpoint). */
  private source(): BackupSource & { url: string } {
    if (!this.opts.source) throw backupUnavailable(this.opts.kind);
    return this.opts.source;
  }

  /** The name is one the server gives, and not the backup being made. */
  private check(name: string): void {
    this.source();
    if (!NAME.test(name))
      throw new AppError('BACKUP_NOT_FOUND', {
        message: 'No such backup: backup names look like plinth-backup-2026-11-28T05-30-00-123Z.tar.gz.',
      });
    if (this.running?.entry.name === name)
      throw new AppError('BACKUP_RUNNING', { message: `The backup ${name} is still being made.` });
  }

  private async write(entry: KeptBackup, chunks: AsyncGenerator<Buffer>, signal: AbortSignal): Promise<void> {
    const { dir, logs } = this.opts;
    const tmp = this.temp(entry.name);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      await pipeline(Readable.from(chunks), createGzip(), createWriteStream(tmp, { flags: 'wx', mode: 0o600 }), {
        signal,
      });
      // On disk before it is listed as ready: a crash after the rename never leaves a short file.
      const fd = openSync(tmp, 'r');
      fsyncSync(fd);
      closeSync(fd);
      renameSync(tmp, this.file(entry.name));
      logs.write('backups', 'info', `backup ${entry.name} ready`, {
        name: entry.name,
        size: this.sizeOf(this.file(entry.name)),
      });
      this.prune();
    } catch (err) {
      await chunks.return(undefined).catch(() => {});
      rmSync(tmp, { force: true });
      const error = signal.aborted ? 'The server stopped while the backup was being made.' : failure(err, dir);
      this.failed.set(entry.name, { ...entry, size: 0, status: 'failed', error });
      logs.write('backups', 'error', `backup ${entry.name} failed: ${error}`, { name: entry.name });
    } finally {
      this.running = null;
    }
  }

  /** Keeps the newest BACKUP_KEEP ready backups. */
  private prune(): void {
    for (const name of this.readyNames().slice(this.opts.keep)) {
      rmSync(this.file(name), { force: true });
      this.opts.logs.write('backups', 'info', `backup ${name} deleted (BACKUP_KEEP=${this.opts.keep})`, { name });
    }
  }

  /** Temp files left by a backup a stopped server was making: never whole, never listed. */
  private sweep(): void {
    for (const name of this.names()) if (PARTIAL.test(name)) rmSync(path.join(this.opts.dir, name), { force: true });
  }

  /** Names of the ready backups, newest first. */
  private readyNames(): string[] {
    return this.names()
      .filter((n) => NAME.test(n))
      .sort()
      .reverse();
  }

  private names(): string[] {
    try {
      return readdirSync(this.opts.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  }

  private sizeOf(file: string): number | null {
    try {
      const st = lstatSync(file);
      return st.isFile() ? st.size : null;
    } catch {
      return null;
    }
  }

  private file(name: string): string {
    return path.join(this.opts.dir, name);
  }

  private temp(name: string): string {
    return path.join(this.opts.dir, `.${name}.partial`);
  }
}
