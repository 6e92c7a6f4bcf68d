// Database benchmark: 100,000 rows (index on the filter column), requests as a user through RLS.
// (a) GET ?owner=eq.X&limit=20, (b) GET by id, (c) single-row POST, each against a bare
// node:http + pg (or PGlite) server running the same SQL on the same database, interleaved.
// Server Postgres: BENCH_DATABASE_URL or TEST_DATABASE_URL (a fresh database is created and
// dropped); PGlite (DATABASE_URL=pglite://): a temp data dir. Run: npx tsx bench/database.ts [postgres|pglite]
// The embedded default against both: bench/engines.ts.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { randomBytes, randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import {
  PLINTH,
  smoke,
  freshBenchDatabase,
  compare,
  freePort,
  requireWrk,
  rssMiB,
  spawnServer,
  type Server,
} from './lib.js';
import { newAdminKey } from '../src/auth/credentials.js';
import { parseRecordsQuery } from '../src/database/query.js';
import { buildInsert, buildSelect } from '../src/database/build.js';
import { loadTables, type TableMeta } from '../src/database/schema.js';
import { compileRead, newContext } from '../src/database/compile.js';
import { Params } from '../src/database/filters.js';
import type { Queryable } from '../src/db/types.js';

const ROWS = Number(process.env.BENCH_ROWS ?? smoke(100_000, 2000));
// BENCH_PROFILE_DIR=<dir> writes a V8 CPU profile of the Plinth process there (for digging, not for numbers).
const PLINTH_ARGS = process.env.BENCH_PROFILE_DIR
  ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_PROFILE_DIR, ...PLINTH.args]
  : PLINTH.args;
const OWNERS = 100;
export const JWT_SECRET = randomBytes(32).toString('hex');
export const ADMIN_KEY = newAdminKey();

async function adminCall(url: string, method: string, p: string, body?: unknown) {
  const r = await fetch(url + p, {
    method,
    headers: { 'x-api-key': ADMIN_KEY, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} ${p}: ${r.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

const sqlCall = (url: string, query: string, params: unknown[] = []) =>
  adminCall(url, 'POST', '/api/database/sql', { query, params }) as Promise<{ rows: any[] }>;

/** Creates the table, policy, index, users and rows through Plinth's own admin API. */
export async function load(url: string) {
  await adminCall(url, 'POST', '/api/database/tables', {
    tableName: 'bench_items',
    rlsEnabled: true,
    columns: [
      { name: 'owner', type: 'uuid', nullable: false, defaultValue: 'auth.uid()' },
      { name: 'name', type: 'string', nullable: false },
      { name: 'n', type: 'integer', nullable: false },
    ],
  });
  await sqlCall(
    url,
    'create policy owner_all on public.bench_items for all to authenticated using (owner = auth.uid()) with check (owner = auth.uid())',
  );
  await sqlCall(url, 'create index bench_items_owner on public.bench_items (owner)');
  // The RPC read of the engines bench: a function's rows, filtered and paged by the request.
  await sqlCall(
    url,
    'create function public.bench_by_owner(o uuid) returns setof public.bench_items language sql stable as $$ select * from public.bench_items where owner = o $$',
  );
  // The caller signs up (admin SQL may not write auth.users); the other owners need no user.
  const signup = await fetch(`${url}/api/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      email: `bench-${randomBytes(4).toString('hex')}@example.com`,
      password: 'bench-password-1',
    }),
  });
  if (!signup.ok) throw new Error(`signup: ${signup.status} ${await signup.text()}`);
  const { accessToken: token } = (await signup.json()) as { accessToken: string };
  const payload = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
  const owner = payload.sub as string;
  const ids = [owner, ...Array.from({ length: OWNERS - 1 }, () => randomUUID())];
  await sqlCall(
    url,
    `insert into public.bench_items (owner, name, n) select ($1::uuid[])[1 + i % $2::int], 'item ' || i, i from generate_series(1, $3::int) i`,
    [`{${ids.join(',')}}`, OWNERS, ROWS],
  );
  await sqlCall(url, 'analyze public.bench_items');
  const one = await sqlCall(url, 'select id from public.bench_items where owner = $1 limit 1', [owner]);
  // The claims Plinth sets for this caller (src/database/caller.ts), for the baseline to set too.
  const claims = JSON.stringify({ ...payload, sub: owner, email: payload.email, role: 'authenticated' });
  return { owner, rowId: one.rows[0].id as string, token, claims };
}

/** The exact statements Plinth builds for the three cases, for the baseline to run. */
export async function statements(db: Queryable, fx: { owner: string; rowId: string }) {
  const table = (await loadTables(db)).get('bench_items')!;
  return {
    // (a) as on /api/db (no count unless Prefer asks), (a2) as on /api/database/records (with the total).
    a: buildSelect(table, parseRecordsQuery(`owner=eq.${fx.owner}&limit=20`), 100, undefined, 'json', 'none').text,
    a2: buildSelect(table, parseRecordsQuery(`owner=eq.${fx.owner}&limit=20`)).text,
    b: buildSelect(table, parseRecordsQuery(`id=eq.${fx.rowId}`)).text,
    c: buildInsert(table, [{ name: 'bench', n: 1 }], { representation: false, select: null, upsert: null }).text,
    // An aggregate read ($1 owner, $2 limit, $3 offset) and the RPC read Plinth builds for
    // GET /api/db/rpc/bench_by_owner?o=<owner>&n=gt.100&limit=20 ($1 o, $2 100, $3 20, $4 0).
    d: buildSelect(table, parseRecordsQuery(`select=count(),n.sum(),n.avg()::int&owner=eq.${fx.owner}`)).text,
    e: rpcRead(table),
  };
}

function rpcRead(table: TableMeta): string {
  const p = new Params();
  p.add('owner');
  const source = { cte: `src as materialized (select * from public."bench_by_owner"("o" => $1::uuid))`, from: 'src' };
  return compileRead(
    newContext(new Map([[table.name, table]]), [], p),
    table,
    parseRecordsQuery('n=gt.100&limit=20'),
    null,
    { source },
  ).text;
}

async function runCases(
  title: string,
  plinth: Server,
  base: Server,
  fx: { owner: string; rowId: string; token: string },
  seconds: number,
  rounds: number,
) {
  const auth = { authorization: `Bearer ${fx.token}` };
  const post = { ...auth, 'content-type': 'application/json' };
  const body = JSON.stringify({ name: 'bench', n: 1 });
  return compare(
    title,
    [
      {
        name: '(a) GET /api/db owner=eq.X&limit=20 (RLS), c=16',
        baseline: { url: `${base.url}/a?owner=${fx.owner}`, headers: auth, pid: base.pid, seconds },
        subject: {
          url: `${plinth.url}/api/db/bench_items?owner=eq.${fx.owner}&limit=20`,
          headers: auth,
          pid: plinth.pid,
          seconds,
        },
      },
      {
        name: '(a2) GET /api/database/records owner=eq.X&limit=20 with the total (RLS), c=16',
        baseline: { url: `${base.url}/a2?owner=${fx.owner}`, headers: auth, pid: base.pid, seconds },
        subject: {
          url: `${plinth.url}/api/database/records/bench_items?owner=eq.${fx.owner}&limit=20`,
          headers: auth,
          pid: plinth.pid,
          seconds,
        },
      },
      {
        name: '(b) GET by id (RLS)',
        baseline: { url: `${base.url}/b?id=${fx.rowId}`, headers: auth, pid: base.pid, seconds },
        subject: { url: `${plinth.url}/api/db/bench_items?id=eq.${fx.rowId}`, headers: auth, pid: plinth.pid, seconds },
      },
      {
        name: '(c) POST one row (RLS)',
        baseline: { url: `${base.url}/c`, method: 'POST', headers: post, body, pid: base.pid, seconds },
        subject: {
          url: `${plinth.url}/api/db/bench_items`,
          method: 'POST',
          headers: post,
          body,
          pid: plinth.pid,
          seconds,
        },
      },
    ],
    rounds,
  );
}

export const plinthEnv = (port: number, extra: Record<string, string>) => ({
  ...extra,
  PORT: String(port),
  HOST: '127.0.0.1',
  LOG_LEVEL: 'warn',
  RATE_LIMIT_PLAN: 'off',
  ADMIN_API_KEY: ADMIN_KEY,
  JWT_SECRET,
  TOKEN_TTL: '3600',
});

async function benchPostgres() {
  const database = await freshBenchDatabase();
  const dbUrl = database.url;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'plinth-bench-db-'));
  const servers: Server[] = [];
  const pool = new pg.Pool({ connectionString: dbUrl, max: 1 });
  pool.on('error', () => {}); // the benchmark's database is dropped with its connections at the end
  try {
    const port = await freePort();
    const plinth = await spawnServer(PLINTH.cmd, PLINTH_ARGS, {
      env: plinthEnv(port, { DATABASE_URL: dbUrl, DATA_DIR: dataDir }),
      port,
      readyPath: '/api/health',
    });
    servers.push(plinth);
    const t0 = Date.now();
    const fx = await load(plinth.url);
    console.log(`loaded ${ROWS} rows in ${Date.now() - t0} ms`);
    const db: Queryable = {
      query: async (text, values) => {
        const r = await pool.query(text, values as unknown[]);
        return { rows: r.rows, rowCount: r.rowCount ?? 0 };
      },
      exec: async () => {},
    };
    const basePort = await freePort();
    const base = await spawnServer(process.execPath, ['--import', 'tsx', 'bench/baseline-database.ts'], {
      env: {
        PORT: String(basePort),
        DATABASE_URL: dbUrl,
        BENCH_SQL: JSON.stringify(await statements(db, fx)),
        BENCH_CLAIMS: fx.claims,
      },
      port: basePort,
      readyPath: `/b?id=${fx.rowId}`,
    });
    servers.push(base);
    await runCases(
      'Records on server Postgres, 100k rows, as a user through RLS (goal ≥ 0.7× reads, ≥ 0.6× insert)',
      plinth,
      base,
      fx,
      4,
      3,
    );
  } finally {
    for (const s of servers) await s.stop();
    await pool.end();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function benchPglite() {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'plinth-bench-pglite-'));
  const baseDir = mkdtempSync(path.join(tmpdir(), 'plinth-bench-pglite-base-'));
  const servers: Server[] = [];
  try {
    let port = await freePort();
    let plinth = await spawnServer(PLINTH.cmd, PLINTH_ARGS, {
      env: plinthEnv(port, { DATA_DIR: dataDir, DATABASE_URL: 'pglite://' }),
      port,
      readyPath: '/api/health',
      timeoutMs: 120_000,
    });
    const t0 = Date.now();
    const fx = await load(plinth.url);
    console.log(`\nloaded ${ROWS} rows into PGlite in ${Date.now() - t0} ms`);
    await plinth.stop();
    // The baseline gets its own copy of the same database (PGlite is single-process).
    cpSync(path.join(dataDir, 'pglite'), baseDir, { recursive: true });
    port = await freePort();
    plinth = await spawnServer(PLINTH.cmd, PLINTH_ARGS, {
      env: plinthEnv(port, { DATA_DIR: dataDir, DATABASE_URL: 'pglite://' }),
      port,
      readyPath: '/api/health',
      timeoutMs: 120_000,
    });
    servers.push(plinth);
    const { PGlite } = await import('@electric-sql/pglite');
    const probe = await PGlite.create(baseDir);
    const db: Queryable = {
      query: async (text, values) => {
        const r = await probe.query<Record<string, unknown>>(
          typeof text === 'string' ? text : text.text,
          values as unknown[],
        );
        return { rows: r.rows as never[], rowCount: r.rows.length };
      },
      exec: async () => {},
    };
    const sqlText = await statements(db, fx);
    await probe.close();
    const basePort = await freePort();
    const base = await spawnServer(process.execPath, ['--import', 'tsx', 'bench/baseline-database.ts'], {
      env: {
        PORT: String(basePort),
        BENCH_PGLITE_DIR: baseDir,
        BENCH_SQL: JSON.stringify(sqlText),
        BENCH_CLAIMS: fx.claims,
      },
      port: basePort,
      readyPath: `/b?id=${fx.rowId}`,
      timeoutMs: 120_000,
    });
    servers.push(base);
    await runCases('Records on PGlite (embedded), 100k rows, as a user through RLS', plinth, base, fx, 3, 2);
    console.log(
      `\n- resident memory: Plinth+PGlite ${rssMiB(plinth.pid).toFixed(0)} MiB, bare+PGlite ${rssMiB(base.pid).toFixed(0)} MiB`,
    );
  } finally {
    for (const s of servers) await s.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(baseDir, { recursive: true, force: true });
  }
}

export async function benchDatabase(which = process.argv[2]): Promise<void> {
  await requireWrk();
  if (which !== 'pglite') await benchPostgres();
  if (which !== 'postgres') await benchPglite();
}

if (import.meta.url === `file://${process.argv[1]}`) await benchDatabase();
