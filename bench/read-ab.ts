// Two builds of Plinth and the bare node:http + pg server on ONE database, the 20-row RLS read
// of bench/database.ts case (a) sent to each in turn (base, branch, bare; `BENCH_AB_ROUNDS`
// rounds of 4 s, c=16), with each server's CPU per request and Postgres's (the backends of the
// database, from /proc). For before/after figures on a noisy machine: all three see the same
// neighbours. Run: BENCH_PLINTH_BASE=<other worktree>/dist/main.js npx tsx bench/read-ab.ts
// Without BENCH_PLINTH_BASE both are this build (an A/A run: the noise floor of the pairing),
// as `npm run bench` and CI's smoke run it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import {
  freePort,
  freshBenchDatabase,
  load as wrk,
  median,
  PLINTH,
  requireWrk,
  smoke,
  spawnServer,
  type Server,
} from './lib.js';
import { load, plinthEnv, statements } from './database.js';
import type { Queryable } from '../src/db/types.js';

const ROUNDS = Number(process.env.BENCH_AB_ROUNDS ?? smoke(5, 1));
const SECONDS = smoke(4, 1);
const BASE = process.env.BENCH_PLINTH_BASE ?? PLINTH.args[0]!;

await requireWrk();
const database = await freshBenchDatabase();
const dirs: string[] = [];
const servers: Server[] = [];
const db = new pg.Client({ connectionString: database.url });
try {
  const plinth = async (main: string, profile = false) => {
    const port = await freePort();
    const dir = mkdtempSync(path.join(tmpdir(), 'plinth-ab-'));
    dirs.push(dir);
    // BENCH_PROFILE_DIR=<dir>: a V8 CPU profile of the branch's process (for digging, not for numbers).
    const prof =
      profile && process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_PROFILE_DIR] : [];
    const s = await spawnServer(PLINTH.cmd, [...prof, main], {
      env: plinthEnv(port, { DATABASE_URL: database.url, DATA_DIR: dir }),
      port,
      readyPath: '/api/health',
    });
    servers.push(s);
    return s;
  };
  const branch = await plinth(PLINTH.args[0]!, true);
  const base = await plinth(BASE);
  const fx = await load(branch.url);
  await db.connect();
  const q: Queryable = {
    query: async (text, values) => {
      const r = await db.query(text as string, values as unknown[]);
      return { rows: r.rows, rowCount: r.rowCount ?? 0 };
    },
    exec: async () => {},
  };
  const barePort = await freePort();
  const bare = await spawnServer(process.execPath, ['--import', 'tsx', 'bench/baseline-database.ts'], {
    env: {
      PORT: String(barePort),
      DATABASE_URL: database.url,
      BENCH_SQL: JSON.stringify(await statements(q, fx)),
      BENCH_CLAIMS: fx.claims,
    },
    port: barePort,
    readyPath: `/b?id=${fx.rowId}`,
  });
  servers.push(bare);
  const pgPids = async () =>
    (
      await db.query<{ pid: number }>(
        'select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
      )
    ).rows.map((r) => r.pid);
  const headers = { authorization: `Bearer ${fx.token}` };
  const targets = [
    { name: 'base', url: `${base.url}/api/db/bench_items?owner=eq.${fx.owner}&limit=20`, pid: base.pid },
    { name: 'branch', url: `${branch.url}/api/db/bench_items?owner=eq.${fx.owner}&limit=20`, pid: branch.pid },
    { name: 'bare', url: `${bare.url}/a?owner=${fx.owner}`, pid: bare.pid },
  ];
  for (const t of targets) await wrk({ url: t.url, headers, seconds: smoke(2, 1), pid: t.pid });
  const runs = new Map<string, Array<{ rps: number; cpu: number; pg: number; errors: number }>>();
  for (let i = 0; i < ROUNDS; i++) {
    for (const t of targets) {
      const r = await wrk({ url: t.url, headers, seconds: SECONDS, pid: t.pid, otherPids: pgPids });
      const list = runs.get(t.name) ?? [];
      list.push({ rps: r.rps, cpu: r.cpuMsPerReq ?? NaN, pg: r.otherCpuMsPerReq ?? NaN, errors: r.errors });
      runs.set(t.name, list);
      console.log(
        `round ${i + 1} ${t.name}: ${r.rps.toFixed(0)} req/s, Node ${r.cpuMsPerReq?.toFixed(3)} ms/req, Postgres ${r.otherCpuMsPerReq?.toFixed(3)} ms/req, errors ${r.errors}`,
      );
    }
  }
  // Paired by round (the three ran back to back): steadier than the medians on a shared machine.
  const [b, s, x] = ['base', 'branch', 'bare'].map((n) => runs.get(n)!);
  const paired = (f: (i: number) => number) => median(b!.map((_, i) => f(i))).toFixed(2);
  console.log(
    `paired medians: branch ÷ base CPU ${paired((i) => s![i]!.cpu / b![i]!.cpu)}, req/s ${paired((i) => s![i]!.rps / b![i]!.rps)}; ` +
      `÷ bare req/s: base ${paired((i) => b![i]!.rps / x![i]!.rps)}, branch ${paired((i) => s![i]!.rps / x![i]!.rps)}`,
  );
  const bareRps = median(runs.get('bare')!.map((r) => r.rps));
  console.log('\n| server | req/s (median) | ÷ bare | Node CPU ms/req | Postgres CPU ms/req | errors |');
  console.log('|---|---|---|---|---|---|');
  for (const [name, list] of runs) {
    const rps = median(list.map((r) => r.rps));
    console.log(
      `| ${name} | ${rps.toFixed(0)} | ${(rps / bareRps).toFixed(2)}× | ${median(list.map((r) => r.cpu)).toFixed(3)} | ${median(list.map((r) => r.pg)).toFixed(3)} | ${list.reduce((a, r) => a + r.errors, 0)} |`,
    );
  }
} finally {
  for (const s of servers) await s.stop();
  await db.end().catch(() => {});
  await database.drop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
