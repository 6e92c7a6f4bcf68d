// The database engines side by side, one run: Plinth on its embedded Postgres (the default),
// on PGlite (the old default, DATABASE_URL=pglite://) and on a server Postgres (DATABASE_URL),
// plus a bare node:http + pg server on the embedded cluster running Plinth's exact SQL.
// Cases: 20-row RLS read, 4 KiB PUT/GET, GET /api/auth/user; then start to healthy on an
// existing data dir and idle memory of Plinth plus its Postgres (the whole process tree).
// Short on purpose (the machine is shared): BENCH_ROWS rows (default 20,000), 2 s rounds.
// BENCH_SMOKE=1: 2,000 rows, one 1 s round per case, one restart per engine.
// Run: npm run bench -- engines   (or npx tsx bench/engines.ts after npm run build)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import {
  PLINTH,
  freshBenchDatabase,
  compare,
  freePort,
  median,
  requireWrk,
  smoke,
  spawnServer,
  treeMemoryMiB,
  type Case,
  type Server,
} from './lib.js';
import type { Queryable } from '../src/db/types.js';

process.env.BENCH_ROWS ??= smoke('20000', '2000');
const { ADMIN_KEY, load, plinthEnv, statements } = await import('./database.js');
const SECONDS = 2;
const ROUNDS = 2;
type Engine = 'embedded' | 'pglite' | 'server';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function startPlinth(engine: Engine, dataDir: string, serverUrl: string): Promise<Server & { readyMs: number }> {
  const port = await freePort();
  const extra: Record<string, string> = { DATA_DIR: dataDir };
  if (engine === 'pglite') extra.DATABASE_URL = 'pglite://';
  if (engine === 'server') extra.DATABASE_URL = serverUrl;
  return spawnServer(PLINTH.cmd, PLINTH.args, {
    env: plinthEnv(port, extra),
    port,
    readyPath: '/api/health',
    timeoutMs: 120_000,
  });
}

const putLua = (prefix: string) => `
  local n = 0
  local headers = { ["x-api-key"] = "${ADMIN_KEY}", ["content-type"] = "application/octet-stream" }
  local body = string.rep("x", 4096)
  request = function()
    n = n + 1
    return wrk.format("PUT", "${prefix}" .. (n % 500), headers, body)
  end`;

async function prepareStorage(url: string) {
  const headers = { 'x-api-key': ADMIN_KEY, 'content-type': 'application/json' };
  const r = await fetch(`${url}/api/storage/buckets`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ bucketName: 'bench', isPublic: true }),
  });
  if (r.status !== 201) throw new Error(`bucket: ${r.status} ${await r.text()}`);
  await fetch(`${url}/api/storage/buckets/bench/objects/small/get.bin`, {
    method: 'PUT',
    headers: { ...headers, 'content-type': 'application/octet-stream' },
    body: 'x'.repeat(4096),
  });
}

async function benchEngines(): Promise<void> {
  await requireWrk();
  const database = await freshBenchDatabase();
  const serverUrl = database.url;
  const dirs = { embedded: '', pglite: '', server: '' } as Record<Engine, string>;
  for (const e of Object.keys(dirs) as Engine[]) dirs[e] = mkdtempSync(path.join(tmpdir(), `plinth-bench-${e}-`));
  const servers = {} as Record<Engine, Server & { readyMs: number }>;
  let base: Server | null = null;
  let pool: pg.Pool | null = null;
  try {
    const fx = {} as Record<Engine, Awaited<ReturnType<typeof load>>>;
    for (const e of Object.keys(dirs) as Engine[]) {
      servers[e] = await startPlinth(e, dirs[e], serverUrl);
      const t0 = Date.now();
      fx[e] = await load(servers[e].url);
      await prepareStorage(servers[e].url);
      console.log(
        `${e}: first start ${servers[e].readyMs.toFixed(0)} ms, loaded ${process.env.BENCH_ROWS} rows in ${Date.now() - t0} ms`,
      );
    }
    // The bare baseline: node:http + pg on the embedded cluster's socket, same database and SQL.
    const embeddedUrl = `postgres://postgres@localhost/plinth?host=${encodeURIComponent(path.join(dirs.embedded, 'postgres'))}`;
    pool = new pg.Pool({ connectionString: embeddedUrl, max: 1 });
    const p = pool;
    const db: Queryable = {
      query: async (text, values) => {
        const r = await p.query(text, values as unknown[]);
        return { rows: r.rows, rowCount: r.rowCount ?? 0 };
      },
      exec: async () => {},
    };
    const basePort = await freePort();
    base = await spawnServer(process.execPath, ['--import', 'tsx', 'bench/baseline-database.ts'], {
      env: {
        PORT: String(basePort),
        DATABASE_URL: embeddedUrl,
        BENCH_SQL: JSON.stringify(await statements(db, fx.embedded)),
        BENCH_CLAIMS: fx.embedded.claims,
      },
      port: basePort,
      readyPath: `/b?id=${fx.embedded.rowId}`,
    });
    const run = { seconds: SECONDS };
    const read = (e: Engine) => ({
      url: `${servers[e].url}/api/database/records/bench_items?owner=eq.${fx[e].owner}&limit=20`,
      headers: { authorization: `Bearer ${fx[e].token}` },
      pid: servers[e].pid,
      ...run,
    });
    const put = (e: Engine) => ({
      url: servers[e].url,
      lua: putLua('/api/storage/buckets/bench/objects/small/put-'),
      pid: servers[e].pid,
      ...run,
      connections: 8,
    });
    const get = (e: Engine) => ({
      url: `${servers[e].url}/api/storage/buckets/bench/objects/small/get.bin`,
      pid: servers[e].pid,
      ...run,
      connections: 16,
    });
    const user = (e: Engine) => ({
      url: `${servers[e].url}/api/auth/user`,
      headers: { authorization: `Bearer ${fx[e].token}` },
      pid: servers[e].pid,
      ...run,
    });
    const cases: Case[] = [
      {
        name: '20-row RLS read: bare node:http + pg on the embedded cluster (base) vs Plinth embedded (goal ≥ 0.7×)',
        baseline: {
          url: `${base.url}/a?owner=${fx.embedded.owner}`,
          headers: { authorization: `Bearer ${fx.embedded.token}` },
          pid: base.pid,
          ...run,
        },
        subject: read('embedded'),
      },
      {
        name: 'read by id (RLS): bare node:http + pg on the embedded cluster (base) vs Plinth embedded (goal ≥ 0.85×)',
        baseline: {
          url: `${base.url}/b?id=${fx.embedded.rowId}`,
          headers: { authorization: `Bearer ${fx.embedded.token}` },
          pid: base.pid,
          ...run,
        },
        subject: {
          url: `${servers.embedded.url}/api/db/bench_items?id=eq.${fx.embedded.rowId}`,
          headers: { authorization: `Bearer ${fx.embedded.token}` },
          pid: servers.embedded.pid,
          ...run,
        },
      },
      {
        name: "aggregate read (RLS), count/sum/avg of an owner's rows: bare node:http + pg on the embedded cluster (base) vs Plinth embedded",
        baseline: {
          url: `${base.url}/d?owner=${fx.embedded.owner}`,
          headers: { authorization: `Bearer ${fx.embedded.token}` },
          pid: base.pid,
          ...run,
        },
        subject: {
          url: `${servers.embedded.url}/api/db/bench_items?select=count(),n.sum(),n.avg()::int&owner=eq.${fx.embedded.owner}`,
          headers: { authorization: `Bearer ${fx.embedded.token}` },
          pid: servers.embedded.pid,
          ...run,
        },
      },
      {
        name: "RPC read with a filter (RLS), a function's rows n > 100, 20 of them: bare node:http + pg on the embedded cluster (base) vs Plinth embedded",
        baseline: {
          url: `${base.url}/e?owner=${fx.embedded.owner}`,
          headers: { authorization: `Bearer ${fx.embedded.token}` },
          pid: base.pid,
          ...run,
        },
        subject: {
          url: `${servers.embedded.url}/api/db/rpc/bench_by_owner?o=${fx.embedded.owner}&n=gt.100&limit=20`,
          headers: { authorization: `Bearer ${fx.embedded.token}` },
          pid: servers.embedded.pid,
          ...run,
        },
      },
      {
        name: '20-row RLS read: Plinth on PGlite (base) vs Plinth embedded (goal ≥ 2×)',
        baseline: read('pglite'),
        subject: read('embedded'),
      },
      {
        name: '20-row RLS read: Plinth on server Postgres (base) vs Plinth embedded',
        baseline: read('server'),
        subject: read('embedded'),
      },
      {
        name: 'PUT 4 KiB: Plinth on PGlite (base) vs Plinth embedded (goal ≥ 2×)',
        baseline: put('pglite'),
        subject: put('embedded'),
      },
      {
        name: 'GET 4 KiB: Plinth on PGlite (base) vs Plinth embedded (goal ≥ 2×)',
        baseline: get('pglite'),
        subject: get('embedded'),
      },
      {
        name: 'PUT 4 KiB: Plinth on server Postgres (base) vs Plinth embedded',
        baseline: put('server'),
        subject: put('embedded'),
      },
      {
        name: 'GET /api/auth/user: Plinth on PGlite (base) vs Plinth embedded',
        baseline: user('pglite'),
        subject: user('embedded'),
      },
      {
        name: 'GET /api/auth/user: Plinth on server Postgres (base) vs Plinth embedded',
        baseline: user('server'),
        subject: user('embedded'),
      },
    ];
    const only = process.env.BENCH_CASES ? new RegExp(process.env.BENCH_CASES) : null;
    await compare(
      'Engines: the embedded default vs PGlite, server Postgres and bare pg',
      cases.filter((c) => !only || only.test(c.name)),
      ROUNDS,
    );

    // Start to healthy on an existing data dir, and idle memory of the whole process tree.
    console.log(
      `\n| engine | start to healthy, existing data dir (median of ${smoke(3, 1)}) | idle memory, process tree: PSS / RSS sum | processes |`,
    );
    console.log('|---|---|---|---|');
    for (const e of ['embedded', 'pglite'] as const) {
      const times: number[] = [];
      for (let i = 0; i < smoke(3, 1); i++) {
        await servers[e].stop();
        servers[e] = await startPlinth(e, dirs[e], serverUrl);
        times.push(servers[e].readyMs);
      }
      await sleep(smoke(3000, 300));
      const m = treeMemoryMiB(servers[e].pid);
      console.log(
        `| ${e} | ${median(times).toFixed(0)} ms (${times.map((t) => t.toFixed(0)).join(', ')}) | ${m.pss.toFixed(0)} / ${m.rss.toFixed(0)} MiB | ${m.processes} |`,
      );
    }
  } finally {
    await base?.stop();
    await pool?.end();
    for (const s of Object.values(servers)) await s.stop();
    await database.drop();
    for (const d of Object.values(dirs)) rmSync(d, { recursive: true, force: true });
  }
}

await benchEngines();
