// Start and memory (issue #38): time from spawn to the first healthy answer of the compiled
// server (`npm start`) on a fresh data dir (initdb, migrations, first admin key) and on an
// existing one, then the idle memory of the whole process tree (Plinth, its Postgres and any
// workers; PSS, shared pages split fairly) and how many processes that is. Also the start from
// the TypeScript source through tsx (`npm run dev`), for comparison. Goals: < 1.5 s existing,
// < 5 s fresh, < 150 MiB idle.
import { rmSync } from 'node:fs';
import { readFileSync } from 'node:fs';
import {
  PLINTH,
  PLINTH_SOURCE,
  benchDir,
  freePort,
  median,
  processTree,
  record,
  smoke,
  spawnServer,
  treeMemoryMiB,
} from './lib.js';

const ROUNDS = smoke(5, 1);
const IDLE_SECONDS = smoke(5, 1);

async function start(which: typeof PLINTH, dataDir: string) {
  const port = await freePort();
  return spawnServer(which.cmd, which.args, {
    env: { DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn', RATE_LIMIT_PLAN: 'off' },
    port,
    readyPath: '/api/health',
  });
}

/** The command names of a process tree, counted (e.g. "postgres × 6, node × 1"). */
function treeNames(root: number): string {
  const counts = new Map<string, number>();
  for (const pid of processTree(root)) {
    try {
      const name = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
      counts.set(name, (counts.get(name) ?? 0) + 1);
    } catch {
      /* gone */
    }
  }
  return [...counts].map(([n, c]) => `${n} × ${c}`).join(', ');
}

async function benchStart(): Promise<void> {
  const dirs: string[] = [];
  const dir = () => {
    const d = benchDir('plinth-bench-start-');
    dirs.push(d);
    return d;
  };
  try {
    const fresh: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const s = await start(PLINTH, dir());
      fresh.push(s.readyMs);
      await s.stop();
    }
    const existingDir = dirs[0]!;
    const existing: number[] = [];
    const source: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const s = await start(PLINTH, existingDir);
      existing.push(s.readyMs);
      await s.stop();
      if (i < 2) {
        const t = await start(PLINTH_SOURCE, existingDir);
        source.push(t.readyMs);
        await t.stop();
      }
    }
    const idle = await start(PLINTH, existingDir);
    await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
    const mem = treeMemoryMiB(idle.pid);
    const names = treeNames(idle.pid);
    await idle.stop();

    const show = (xs: number[]) => `median ${median(xs).toFixed(0)} ms of ${xs.map((t) => t.toFixed(0)).join(', ')}`;
    console.log('\n## Start and memory (goals: < 1.5 s existing, < 5 s fresh, < 150 MiB idle PSS)\n');
    console.log(`- start to first healthy answer, fresh data dir: ${show(fresh)}`);
    console.log(`- start to first healthy answer, existing data dir: ${show(existing)}`);
    console.log(`- the same from the TypeScript source through tsx: ${show(source)}`);
    console.log(
      `- idle after ${IDLE_SECONDS} s, whole process tree: PSS ${mem.pss.toFixed(0)} MiB, RSS sum ${mem.rss.toFixed(0)} MiB, ${mem.processes} processes (${names})`,
    );
    record('start.fresh', median(fresh));
    record('start.existing', median(existing));
    record('start.idle.pss', mem.pss);
    record('start.idle.processes', mem.processes);
  } finally {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

await benchStart();
