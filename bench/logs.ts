// Logs benchmark: the cost of writing every request to the log store. Two Plinth servers on the
// same server Postgres database, one with LOGS_STORE=false (baseline) and one with the store on,
// interleaved: GET /api/health and a 20-row read as a user through RLS (goal ≥ 0.95×).
// Also: how long the store takes to answer a search and the stats over what the run wrote.
// Run: npx tsx bench/logs.ts (BENCH_DATABASE_URL or TEST_DATABASE_URL, else local postgres).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import {
  PLINTH,
  compare,
  freePort,
  freshBenchDatabase,
  pinnedCpus,
  record,
  requireWrk,
  smoke,
  spawnServer,
  type Server,
} from './lib.js';

process.env.BENCH_ROWS ??= smoke('10000', '1000');
const { load, plinthEnv, ADMIN_KEY } = await import('./database.js');

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const v = await fn();
  return [v, performance.now() - t0];
}

async function benchLogs(): Promise<void> {
  await requireWrk();
  const database = await freshBenchDatabase();
  const dirs = [
    mkdtempSync(path.join(tmpdir(), 'plinth-bench-logs-')),
    mkdtempSync(path.join(tmpdir(), 'plinth-bench-logs-')),
  ];
  const servers: Server[] = [];
  const cpus = await pinnedCpus();
  let watcher: pg.Client | null = null;
  try {
    const start = async (store: boolean, dataDir: string) => {
      const port = await freePort();
      const s = await spawnServer(PLINTH.cmd, PLINTH.args, {
        env: plinthEnv(port, { DATABASE_URL: database.url, DATA_DIR: dataDir, LOGS_STORE: String(store) }),
        port,
        readyPath: '/api/health',
        cpu: cpus?.server,
      });
      servers.push(s);
      return s;
    };
    const on = await start(true, dirs[0]!);
    const off = await start(false, dirs[1]!);
    const fx = await load(on.url);
    const auth = { authorization: `Bearer ${fx.token}` };
    // Postgres's share: the backends on the benchmark's database (both servers' pools; the
    // store's inserts run there), read from /proc (same machine), listed again every 250 ms.
    const db = new pg.Client({ connectionString: database.url });
    watcher = db;
    await db.connect();
    const pgPids = async () => {
      const { rows } = await db.query<{ pid: number }>(
        'select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
      );
      return rows.map((r) => r.pid);
    };
    const run = { seconds: 3, connections: 16, cpu: cpus?.load, otherPids: pgPids };
    const read = (s: Server) => `${s.url}/api/database/records/bench_items?owner=eq.${fx.owner}&limit=20`;
    const results = await compare(
      `Log store on (subject) vs off (baseline), same database, interleaved (goal ≥ 0.95×; ${cpus ? `servers on CPU ${cpus.server}, wrk on CPU ${cpus.load}` : 'unpinned'})`,
      [
        {
          name: 'GET /api/health',
          baseline: { url: `${off.url}/api/health`, pid: off.pid, ...run },
          subject: { url: `${on.url}/api/health`, pid: on.pid, ...run },
        },
        {
          name: 'GET 20 rows (RLS)',
          baseline: { url: read(off), headers: auth, pid: off.pid, ...run },
          subject: { url: read(on), headers: auth, pid: on.pid, ...run },
        },
      ],
      3,
    );
    const us = (v: number | undefined) => (v === undefined ? '-' : `${(v * 1000).toFixed(1)} µs`);
    for (const r of results) {
      console.log(
        `- ${r.name}: Postgres CPU a request (backends of the database) off ${us(r.baseline.otherCpuMsPerReq)}, on ${us(r.subject.otherCpuMsPerReq)}`,
      );
      record(
        `logs: Postgres CPU µs a request, on − off :: ${r.name}`,
        ((r.subject.otherCpuMsPerReq ?? 0) - (r.baseline.otherCpuMsPerReq ?? 0)) * 1000,
      );
    }
    const admin = { 'x-api-key': ADMIN_KEY };
    const [sources, tSources] = await timed(
      async () =>
        (await (await fetch(`${on.url}/api/logs/sources`, { headers: admin })).json()) as {
          sources: Array<{ name: string; count: number }>;
        },
    );
    const [, tSearch] = await timed(() =>
      fetch(`${on.url}/api/logs/search?q=bench_items&limit=100`, { headers: admin }).then((r) => r.json()),
    );
    const [, tStats] = await timed(() => fetch(`${on.url}/api/logs/stats`, { headers: admin }).then((r) => r.json()));
    const metrics = await (await fetch(`${on.url}/metrics`, { headers: admin })).text();
    const dropped = /^plinth_logs_dropped_total (\d+)/m.exec(metrics)?.[1];
    console.log(
      `\n- lines stored: ${sources.sources.find((s) => s.name === 'api')?.count ?? 0} (api), dropped: ${dropped ?? '?'}`,
    );
    console.log(
      `- over them: sources ${tSources.toFixed(0)} ms, search q=bench_items ${tSearch.toFixed(0)} ms, stats (last hour) ${tStats.toFixed(0)} ms`,
    );
  } finally {
    await watcher?.end();
    for (const s of servers) await s.stop();
    await database.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

await benchLogs();
