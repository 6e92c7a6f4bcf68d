import { open, stat, statfs, unlink } from 'node:fs/promises';
import path from 'node:path';

const MiB = 1024 * 1024;

/** Bytes an unprivileged writer may still use on the filesystem of `dir` (or its nearest existing parent). */
export async function freeBytes(dir: string): Promise<number> {
  let d = path.resolve(dir);
  for (;;) {
    try {
      const s = await statfs(d);
      return s.bavail * s.bsize;
    } catch (err) {
      const parent = path.dirname(d);
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || parent === d) throw err;
      d = parent;
    }
  }
}

/**
 * Writes and removes a 4 KiB file in `dir`: throws (ENOSPC) when nothing more can be stored.
 * No fsync: filesystems reserve the blocks at write time (tmpfs, ext4's delayed allocation,
 * XFS), and a health probe must stay fast on a busy disk.
 */
async function probeWrite(dir: string): Promise<void> {
  const file = path.join(dir, `.plinth-disk-probe-${process.pid}`);
  const fh = await open(file, 'w');
  try {
    await fh.write(Buffer.alloc(4096));
  } finally {
    await fh.close();
    await unlink(file).catch(() => {});
  }
}

export interface DiskState {
  /** The least free space over the filesystems looked at. */
  freeBytes: number;
  low: boolean;
}

/**
 * The disks under the data dir: `write` dirs get a small write (throws when it fails: writes
 * fail there), every existing dir its free space, once per filesystem.
 */
export async function checkDisks(dirs: Array<{ dir: string; write: boolean }>, lowBytes: number): Promise<DiskState> {
  const seen = new Set<string>();
  let least = Infinity;
  for (const { dir, write } of dirs) {
    const st = await stat(dir).catch(() => null);
    if (!st?.isDirectory()) continue;
    if (write) await probeWrite(dir);
    if (seen.has(String(st.dev))) continue;
    seen.add(String(st.dev));
    least = Math.min(least, await freeBytes(dir));
  }
  return { freeBytes: least === Infinity ? 0 : least, low: least < lowBytes };
}

/**
 * Health of the disks under DATA_DIR (what the embedded database and local storage write):
 * throws when a write fails there (down), else the free bytes, degraded below `lowBytes`.
 */
export async function dataDirHealth(
  dataDir: string,
  lowBytes: number,
): Promise<{ info: { freeBytes: number }; degraded?: string }> {
  const at = (sub: string, write: boolean) => ({ dir: path.join(dataDir, sub), write });
  const d = await checkDisks([at('', true), at('storage', true), at('postgres', false)], lowBytes);
  const free = `${(d.freeBytes / MiB).toFixed(0)} MiB`;
  return {
    info: { freeBytes: d.freeBytes },
    ...(d.low
      ? {
          degraded: `Only ${free} free under DATA_DIR (DISK_LOW_MB is ${lowBytes / MiB}): free disk space before writes fail.`,
        }
      : {}),
  };
}

/** Below this, the embedded Postgres cannot even create its cluster and start. */
export const START_MIN_BYTES = 64 * MiB;

/** One line saying the data dir's disk is too full to start, or null when there is room. */
export async function diskTooFullToStart(dataDir: string): Promise<string | null> {
  const free = await freeBytes(dataDir).catch(() => null);
  if (free === null || free >= START_MIN_BYTES) return null;
  return (
    `The disk of DATA_DIR (${path.resolve(dataDir)}) has only ${(free / MiB).toFixed(1)} MiB free; Plinth needs at least ${START_MIN_BYTES / MiB} MiB to start its database. ` +
    'Free disk space there, or set DATA_DIR to a folder on a bigger disk.'
  );
}
