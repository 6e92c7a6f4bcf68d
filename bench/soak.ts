// Soak: a steady mixed load (reads, writes with unique ids, 4 KiB uploads, function calls)
// against the compiled server for N minutes (default 10; --minutes 2 to shorten,
// --concurrency 4). Prints the server's resident memory (RSS, and the PSS of its process
// tree: the embedded Postgres and the Deno processes, shared pages counted once) and p99 per
// minute, and the growth after the first minute (goal: RSS < 10%, p99 flat).
// DATABASE_URL in the environment runs it on that server Postgres instead of the default.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { PLINTH, freePort, rssMiB, spawnServer, treeMemoryMiB } from './lib.js';
import { prepare, runLoad, type Answer } from '../test/faults/load.js';

const { values } = parseArgs({
  options: { minutes: { type: 'string', default: '10' }, concurrency: { type: 'string', default: '4' } },
});
const minutes = Number(values.minutes);
const concurrency = Number(values.concurrency);
const ADMIN_KEY = `ik_${'c'.repeat(64)}`;

const p99 = (xs: number[]): number => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * 0.99))]!;
};

async function main() {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'plinth-soak-'));
  const port = await freePort();
  const server = await spawnServer(PLINTH.cmd, PLINTH.args, {
    port,
    readyPath: '/api/health',
    env: {
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      ADMIN_API_KEY: ADMIN_KEY,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PLAN: 'off',
    },
  });
  try {
    const target = await prepare({ url: server.url, adminKey: ADMIN_KEY });
    console.log(
      `soak: ${minutes} min, ${concurrency} concurrent clients, ${process.env.DATABASE_URL ? 'server Postgres (DATABASE_URL)' : 'default database'}`,
    );
    console.log('minute  requests  errors  p99 ms (read/write/upload/call)      RSS MiB  tree PSS MiB');
    const load = runLoad(target, concurrency);
    const rows: Array<{ rss: number; tree: number; p99: number }> = [];
    let seen = 0;
    for (let m = 1; m <= minutes; m++) {
      await new Promise((r) => setTimeout(r, 60_000));
      const answers: Answer[] = load.answers.slice(seen);
      seen += answers.length;
      const errors = answers.filter((a) => a.status < 200 || a.status >= 300).length;
      const byKind = (k: Answer['kind']) => p99(answers.filter((a) => a.kind === k).map((a) => a.ms));
      const row = { rss: rssMiB(server.pid), tree: treeMemoryMiB(server.pid).pss, p99: p99(answers.map((a) => a.ms)) };
      rows.push(row);
      const kinds = (['read', 'write', 'upload', 'call'] as const).map((k) => byKind(k).toFixed(1)).join('/');
      console.log(
        `${`${String(m).padStart(6)}  ${String(answers.length).padStart(8)}  ${String(errors).padStart(6)}  ${row.p99.toFixed(1).padStart(6)} (${kinds})`.padEnd(
          58,
        )}${row.rss.toFixed(1).padStart(7)}  ${row.tree.toFixed(1).padStart(12)}`,
      );
    }
    await load.stop();
    if (rows.length >= 2) {
      const first = rows[0]!;
      const last = rows[rows.length - 1]!;
      const maxRss = Math.max(...rows.slice(1).map((r) => r.rss));
      const growth = (x: number, y: number) => `${(((y - x) / x) * 100).toFixed(1)}%`;
      console.log(
        `RSS growth after minute 1: ${growth(first.rss, last.rss)} at the end, ${growth(first.rss, maxRss)} at the peak (goal < 10%)`,
      );
      console.log(`Process tree (Postgres, Deno) PSS growth after minute 1: ${growth(first.tree, last.tree)}`);
      console.log(
        `p99 minute 1 → last: ${first.p99.toFixed(1)} → ${last.p99.toFixed(1)} ms (×${(last.p99 / first.p99).toFixed(2)})`,
      );
    }
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
