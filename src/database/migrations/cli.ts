// `npm run plinth -- db migrations new <name> | up | list`: the app's migrations/*.sql files
// against a running server, over the same HTTP API the dashboard and agents use.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { checksumOf } from './service.js';

export const MIGRATIONS_USAGE = `  db migrations new <name>   write migrations/<timestamp>_<name>.sql to fill in
  db migrations list         the files and the server's applied migrations: applied, pending, drift
  db migrations up           apply the pending files in version order (stops at the first failure)
                             list and up take --url <server> --key <admin key> [--dir migrations],
                             or PLINTH_URL and PLINTH_ADMIN_KEY`;

interface LocalFile {
  version: string;
  name: string;
  file: string;
  sql: string;
}
interface Applied {
  version: string;
  name: string;
  checksum: string;
}
type Out = (line: string) => void;

const FILE = /^([0-9]{1,32})_([A-Za-z0-9_-]{1,100})\.sql$/;
const byVersion = (a: { version: string }, b: { version: string }) =>
  a.version.length - b.version.length || (a.version < b.version ? -1 : a.version > b.version ? 1 : 0);

function flags(argv: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const m = /^--(url|key|dir)$/.exec(argv[i]!);
    if (m && argv[i + 1] !== undefined) out[m[1]!] = argv[++i]!;
  }
  return out;
}

export function readLocal(dir: string): LocalFile[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((f) => f.endsWith('.sql'));
  } catch {
    return [];
  }
  const files = names.map((file) => {
    const m = FILE.exec(file);
    if (!m) throw new Error(`${path.join(dir, file)}: migration files are named <digits>_<name>.sql`);
    return { version: m[1]!, name: m[2]!, file, sql: readFileSync(path.join(dir, file), 'utf8') };
  });
  const seen = new Set<string>();
  for (const f of files) {
    if (seen.has(f.version)) throw new Error(`two migration files have version ${f.version}`);
    seen.add(f.version);
  }
  return files.sort(byVersion);
}

/** The status of each version, local or applied: applied, pending, drift (file changed) or missing (applied, no file). */
type Status = { version: string; name: string; status: 'applied' | 'pending' | 'drift' | 'missing' };
export function statusOf(local: LocalFile[], applied: Applied[]): Status[] {
  const done = new Map(applied.map((a) => [a.version, a]));
  const rows = local.map((f): Status => {
    const a = done.get(f.version);
    return {
      version: f.version,
      name: f.name,
      status: !a ? ('pending' as const) : a.checksum === checksumOf(f.sql) ? ('applied' as const) : ('drift' as const),
    };
  });
  const files = new Set(local.map((f) => f.version));
  for (const a of applied)
    if (!files.has(a.version)) rows.push({ version: a.version, name: a.name, status: 'missing' });
  return rows.sort(byVersion);
}

async function api(base: string, key: string, method: string, p: string, body?: unknown): Promise<any> {
  const r = await fetch(new URL(p, base), {
    method,
    headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const data = (await r.json().catch(() => null)) as any;
  if (!r.ok)
    throw new Error(
      `${method} ${p}: ${r.status} ${data?.error ?? ''} ${data?.message ?? ''}${data?.nextActions ? `\n  ${data.nextActions}` : ''}`,
    );
  return data;
}

function stamp(d = new Date()): string {
  return d.toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

/** Runs one `db migrations` command; returns the exit code. */
export async function migrationsCommand(
  argv: string[],
  opts: { env: Record<string, string | undefined>; cwd: string; out: Out },
): Promise<number> {
  const [sub, cmd, arg] = argv;
  const f = flags(argv);
  const dir = path.resolve(opts.cwd, f.dir ?? 'migrations');
  if (sub !== 'migrations' || !cmd || !['new', 'list', 'up'].includes(cmd)) {
    opts.out(`Usage: npm run plinth -- <command>\n\n${MIGRATIONS_USAGE}`);
    return 2;
  }
  if (cmd === 'new') {
    if (!arg || !/^[A-Za-z0-9_-]{1,100}$/.test(arg)) {
      opts.out('Give the migration a name of letters, digits, _ and -: db migrations new add_posts');
      return 2;
    }
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${stamp()}_${arg}.sql`);
    writeFileSync(
      file,
      `-- ${arg}: runs in one transaction as the owner role. Check it with POST /api/database/migrations/dry-run.\n`,
      { flag: 'wx' },
    );
    opts.out(`Created ${path.relative(opts.cwd, file)}`);
    return 0;
  }
  const url = f.url ?? opts.env.PLINTH_URL;
  const key = f.key ?? opts.env.PLINTH_ADMIN_KEY;
  if (!url || !key) {
    opts.out(
      'Say which server: --url http://localhost:7130 --key <admin key>, or set PLINTH_URL and PLINTH_ADMIN_KEY.',
    );
    return 2;
  }
  const local = readLocal(dir);
  const { migrations } = (await api(url, key, 'GET', '/api/database/migrations')) as { migrations: Applied[] };
  const rows = statusOf(local, migrations);
  if (cmd === 'list') {
    for (const r of rows) opts.out(`${r.status.padEnd(8)} ${r.version} ${r.name}`);
    if (!rows.length) opts.out(`No migrations in ${dir} or on the server.`);
    return rows.some((r) => r.status === 'drift') ? 1 : 0;
  }
  const drift = rows.filter((r) => r.status === 'drift');
  if (drift.length) {
    for (const r of drift)
      opts.out(
        `drift    ${r.version} ${r.name}: the file changed after it was applied; restore it and put the change in a new migration`,
      );
    return 1;
  }
  const pending = local.filter((l) => rows.find((r) => r.version === l.version)?.status === 'pending');
  for (const m of pending) {
    const risk = await api(url, key, 'POST', '/api/database/migrations/dry-run', { sql: m.sql });
    await api(url, key, 'POST', '/api/database/migrations', { version: m.version, name: m.name, sql: m.sql });
    opts.out(
      `applied  ${m.version} ${m.name} (${risk.riskLevel}${risk.reasons.length ? `: ${risk.reasons.join('; ')}` : ''})`,
    );
  }
  if (!pending.length) opts.out('Nothing to apply: the server is up to date.');
  return 0;
}
