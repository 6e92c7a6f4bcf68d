// The embedded cluster on disk: who runs it (never root), initdb once, where its socket lives.
import { execFile, execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { EmbeddedPostgresError, type PgBinaries } from './binaries.js';

const run = promisify(execFile);

/** The unprivileged account postgres runs as when Plinth runs as root. */
export interface RunAs {
  name: string;
  uid: number;
  gid: number;
}

/** The superuser role initdb creates; the socket (0700) is the only way in. */
export const SUPERUSER = 'postgres';

/** `name`'s entry in /etc/passwd, or null (no such line, or no readable file). */
function fromPasswd(name: string): RunAs | null {
  let text: string;
  try {
    text = readFileSync('/etc/passwd', 'utf8');
  } catch {
    return null;
  }
  for (const line of text.split('\n')) {
    const [user, , uid, gid] = line.split(':');
    if (user !== name) continue;
    const ids = { uid: Number(uid), gid: Number(gid) };
    return Number.isInteger(ids.uid) && Number.isInteger(ids.gid) ? { name, ...ids } : null;
  }
  return null;
}

/**
 * The user's ids: from /etc/passwd (no process to spawn, at every start as root), else from
 * `id` (users of a directory service that /etc/passwd does not list).
 */
function lookup(name: string): RunAs | null {
  const listed = fromPasswd(name);
  if (listed) return listed.uid > 0 ? listed : null;
  try {
    const uid = Number(
      execFileSync('id', ['-u', name], { stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim(),
    );
    const gid = Number(
      execFileSync('id', ['-g', name], { stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim(),
    );
    return Number.isInteger(uid) && uid > 0 ? { name, uid, gid } : null;
  } catch {
    return null;
  }
}

/**
 * Postgres refuses to run as root. As root, use the system user `plinth` (created with
 * useradd --system the first time), else an existing `postgres` or `nobody`. Null when
 * Plinth does not run as root: postgres runs as the same user.
 */
export function resolveRunAs(): RunAs | null {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return null;
  const existing = lookup('plinth');
  if (existing) return existing;
  try {
    execFileSync(
      'useradd',
      ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', 'plinth'],
      { stdio: 'ignore' },
    );
  } catch {
    /* no useradd (or not allowed): fall back to an existing unprivileged user */
  }
  const found = lookup('plinth') ?? lookup('postgres') ?? lookup('nobody');
  if (!found) {
    throw new EmbeddedPostgresError(
      'Plinth runs as root and Postgres refuses to: no unprivileged user (plinth, postgres, nobody) exists and ' +
        '"useradd --system plinth" failed. Create a user, or run Plinth as an ordinary user, or set DATABASE_URL.',
    );
  }
  return found;
}

/**
 * Every directory above `dir` must be searchable by `user`, or postgres cannot reach its
 * data. DATA_DIR itself (Plinth's own folder) gets o+x (search, not list) when it lacks it.
 */
function checkReachable(dir: string, user: RunAs): void {
  for (let d = path.dirname(dir); ; d = path.dirname(d)) {
    const st = statSync(d);
    let ok = st.uid === user.uid ? st.mode & 0o100 : st.gid === user.gid ? st.mode & 0o010 : st.mode & 0o001;
    if (!ok && d === path.dirname(dir)) {
      chmodSync(d, (st.mode & 0o7777) | 0o001);
      ok = 1;
    }
    if (!ok) {
      throw new EmbeddedPostgresError(
        `Postgres runs as the unprivileged user "${user.name}" (it refuses root) and cannot enter ${d}. ` +
          `Set DATA_DIR to a directory outside it (e.g. /var/lib/plinth), or "chmod o+x ${d}".`,
      );
    }
    if (path.dirname(d) === d) return;
  }
}

/** Hands `dir` and everything in it to `user` (a restored or carried cluster made by root). */
export function chownTree(dir: string, user: RunAs): void {
  execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, dir]);
}

/** Makes `dir` (mode 0700) and hands it to `user`. */
function ownDir(dir: string, user: RunAs | null): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  if (user) chownSync(dir, user.uid, user.gid);
}

/**
 * Creates the cluster in `dir` once (UTF-8, ICU root collation so that text sorts the way
 * people expect: `alice` before `Shopping`). initdb writes into a sibling folder first and
 * it is renamed into place only when complete, so an interrupted first start never leaves
 * a half-made cluster. Returns true when this call created it.
 */
export async function ensureCluster(opts: { bins: PgBinaries; dir: string; user: RunAs | null }): Promise<boolean> {
  const { bins, dir, user } = opts;
  mkdirSync(path.dirname(dir), { recursive: true });
  if (user) checkReachable(dir, user);
  if (existsSync(path.join(dir, 'PG_VERSION'))) {
    if (user && statSync(dir).uid !== user.uid) chownTree(dir, user);
    return false;
  }
  if (existsSync(dir)) {
    throw new EmbeddedPostgresError(`${dir} exists but holds no Postgres cluster. Move it away and start again.`);
  }
  const tmp = `${dir}.init-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  ownDir(tmp, user);
  const args = ['-D', tmp, '-U', SUPERUSER, '--auth-local=trust', '--auth-host=scram-sha-256', '--encoding=UTF8'];
  args.push('--locale-provider=icu', '--icu-locale=und', '--locale=C', '--no-instructions');
  try {
    await run(bins.initdb, args, { uid: user?.uid, gid: user?.gid, cwd: tmp, env: { ...process.env, LC_ALL: 'C' } });
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    const out = (err as { stderr?: string }).stderr ?? '';
    throw new EmbeddedPostgresError(`initdb failed for ${dir}: ${out.trim() || String(err)}`, { cause: err });
  }
  renameSync(tmp, dir);
  return true;
}

// sockaddr_un.sun_path is 108 bytes on Linux (104 on macOS), NUL included.
const SOCKET_PATH_MAX = 100;

/**
 * Where postgres puts its socket (`.s.PGSQL.5432`): the cluster dir itself, or, when that
 * path is too long for a Unix socket, a fresh 0700 folder under the temp dir.
 * `cleanup` removes a temp folder again.
 */
export function socketDir(clusterDir: string, user: RunAs | null): { dir: string; cleanup: () => void } {
  const abs = path.resolve(clusterDir);
  if (Buffer.byteLength(path.join(abs, '.s.PGSQL.5432')) <= SOCKET_PATH_MAX) return { dir: abs, cleanup: () => {} };
  const dir = mkdtempSync(path.join(tmpdir(), 'plinth-pg-'));
  ownDir(dir, user);
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
