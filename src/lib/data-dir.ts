// DATA_DIR at start: writable, and held by one Plinth at a time. The lock is a Unix socket in
// DATA_DIR that the running Plinth listens on: a second Plinth connects to it, learns who holds
// the folder and refuses to start. A pathname socket is reachable from every process that sees
// the file, across containers sharing a volume (PID namespaces hide each other's postmaster.pid
// owner, so Postgres's own interlock does not hold there), and the kernel closes it when its
// holder dies however it dies: a stale socket file refuses connections and is replaced.
import { closeSync, mkdirSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import net from 'node:net';
import { hostname } from 'node:os';
import path from 'node:path';

const LOCK_NAME = '.plinth.lock';
// sockaddr_un.sun_path: 108 bytes on Linux, 104 on macOS, NUL included.
const SOCKET_PATH_MAX = 100;
const CLAIM_STALE_MS = 10_000;

/** DATA_DIR cannot be used: the message is one line, printed as the start's failure. */
export class DataDirError extends Error {
  override name = 'DataDirError';
}

export interface DataDirLock {
  /** Where the lock lives, null when DATA_DIR's path is too long for a socket (no lock then). */
  socket: string | null;
  release(): Promise<void>;
}

/** Who holds a DATA_DIR, as its holder tells a contender. */
interface Holder {
  pid: number;
  host: string;
  since: string;
}

/** Makes DATA_DIR if needed and checks that this user can write there; throws a one-line DataDirError. */
export function ensureWritable(dataDir: string): void {
  const dir = path.resolve(dataDir);
  const uid = typeof process.getuid === 'function' ? ` (uid ${process.getuid()})` : '';
  const fix = `Mount a writable volume there (e.g. podman run -v plinth-data:${dir}) or set DATA_DIR to a folder this user can write`;
  const st = statSync(dir, { throwIfNoEntry: false });
  if (st && !st.isDirectory()) throw new DataDirError(`DATA_DIR ${dir} is a file, not a folder. ${fix}.`);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw new DataDirError(`DATA_DIR ${dir} cannot be created${uid}: ${reason(err)}. ${fix}.`);
  }
  const probe = path.join(dir, `.plinth-write-probe-${process.pid}`);
  try {
    closeSync(openSync(probe, 'w'));
    rmSync(probe, { force: true });
  } catch (err) {
    throw new DataDirError(`DATA_DIR ${dir} is not writable${uid}: ${reason(err)}. ${fix}.`);
  }
}

function reason(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EROFS') return 'it is on a read-only filesystem';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'ENOTDIR') return 'a file stands where a folder of its path should be';
  return code ?? String(err);
}

/** The socket's path as this process can bind it: absolute, or relative to the cwd when that is short enough. */
function socketPath(dataDir: string): string | null {
  const abs = path.resolve(dataDir, LOCK_NAME);
  if (Buffer.byteLength(abs) <= SOCKET_PATH_MAX) return abs;
  const rel = path.relative(process.cwd(), abs);
  return Buffer.byteLength(rel) <= SOCKET_PATH_MAX ? rel : null;
}

/** Asks the socket's holder who it is; null when nothing listens there (no file, or a stale one). */
function askHolder(socket: string): Promise<Holder | null> {
  return new Promise((resolve, reject) => {
    const c = net.connect(socket);
    let text = '';
    c.setEncoding('utf8');
    c.setTimeout(3000, () => c.destroy(new Error('timeout')));
    c.on('data', (d) => (text += d));
    c.on('end', () => {
      try {
        resolve(JSON.parse(text) as Holder);
      } catch {
        resolve({ pid: 0, host: 'unknown', since: 'unknown' });
      }
    });
    c.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNREFUSED' || err.code === 'ENOENT') resolve(null);
      else if (err.message === 'timeout') resolve({ pid: 0, host: 'unknown (it does not answer)', since: 'unknown' });
      else reject(err);
    });
  });
}

/** A short exclusive claim around check-and-bind, so two Plinths starting at once cannot both win. */
async function claim(dataDir: string): Promise<() => void> {
  const file = path.resolve(dataDir, `${LOCK_NAME}.claim`);
  const deadline = Date.now() + CLAIM_STALE_MS + 2000;
  for (;;) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(file, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || Date.now() > deadline) throw err;
      // A claim left by a Plinth that died between claiming and binding goes stale.
      const age = Date.now() - (statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > CLAIM_STALE_MS) rmSync(file, { force: true });
      else await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/**
 * Takes DATA_DIR for this process, or throws a one-line DataDirError naming the Plinth that
 * holds it. Call ensureWritable first. Held until release() or the end of the process.
 */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  const socket = socketPath(dataDir);
  if (socket === null) return { socket: null, release: async () => {} };
  const unclaim = await claim(dataDir);
  try {
    const holder = await askHolder(socket);
    if (holder) {
      throw new DataDirError(
        `DATA_DIR ${path.resolve(dataDir)} is in use by another Plinth (pid ${holder.pid} on host ${holder.host}, since ${holder.since}). ` +
          'One Plinth per DATA_DIR: stop that one first, or give this one its own DATA_DIR (to run several, use DATABASE_URL and REDIS_URL, see docs/deploy.md).',
      );
    }
    rmSync(socket, { force: true }); // stale: its holder is gone
    const me: Holder = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
    const server = net.createServer((c) => c.end(JSON.stringify(me)));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socket, () => resolve());
    });
    server.unref();
    return {
      socket,
      release: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  } finally {
    unclaim();
  }
}
