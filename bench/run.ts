// `npm run bench`: every area's benchmark in turn (or the ones named: npm run bench -- auth ai),
// then one summary table of the figures issue #38 tracks (bench/summary.ts).
// `npm run bench:smoke` (BENCH_SMOKE=1): the same, each benchmark tiny, so a crash shows (CI).
// BENCH_JOBS=n runs n benchmarks at once (default 1; their figures then disturb each other, so
// only for the smoke run, whose figures mean nothing), each one's output printed when it ends.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { summary } from './summary.js';

// The benchmarks run the compiled server, as `npm start` does: build the current source first.
if (spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' }).status !== 0) process.exit(1);

const AREAS = [
  'start',
  'foundation',
  'auth',
  'mfa',
  'oauth',
  'database',
  'read-ab',
  'engines',
  'embed',
  'storage',
  'storage-images',
  'storage-breadth',
  'functions',
  'ai',
  'realtime',
  'logs',
  'automation',
  'mcp',
];

const JOBS = Math.max(1, Number(process.env.BENCH_JOBS ?? 1));

/**
 * Runs one benchmark, its output kept (for the summary) and shown: as it comes when it runs
 * alone, at its end (stderr included) when others run beside it.
 */
function runOne(area: string, env: NodeJS.ProcessEnv): Promise<{ status: number | null; out: string }> {
  if (JOBS === 1) console.log(`\n# ${area}`);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', `bench/${area}.ts`], {
      env,
      stdio: ['ignore', 'pipe', JOBS > 1 ? 'pipe' : 'inherit'],
    });
    let out = '';
    let err = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d;
      if (JOBS === 1) process.stdout.write(d);
    });
    child.stderr?.on('data', (d: Buffer) => (err += d));
    child.on('close', (status) => {
      if (JOBS > 1) {
        process.stdout.write(`\n# ${area}\n${out}`);
        process.stderr.write(err);
      }
      resolve({ status, out });
    });
  });
}

const chosen = process.argv.slice(2).length ? process.argv.slice(2) : AREAS;
const dir = mkdtempSync(path.join(tmpdir(), 'plinth-bench-results-'));
const env = { ...process.env, BENCH_RESULTS: path.join(dir, 'results.jsonl') };
const failed: string[] = [];
let output = '';
const t0 = Date.now();
async function runArea(area: string): Promise<void> {
  const file = `bench/${area}.ts`;
  if (!existsSync(file)) {
    console.error(`no benchmark ${file}`);
    failed.push(area);
    return;
  }
  const started = Date.now();
  const r = await runOne(area, env);
  output += r.out;
  console.log(
    `\n(${area}: ${((Date.now() - started) / 1000).toFixed(1)} s${r.status === 0 ? '' : `, FAILED (exit ${r.status})`})`,
  );
  if (r.status !== 0) failed.push(area);
}
// JOBS workers, each taking the next area in order.
const queue = [...chosen];
await Promise.all(
  Array.from({ length: Math.min(JOBS, queue.length) }, async () => {
    for (let area = queue.shift(); area !== undefined; area = queue.shift()) await runArea(area);
  }),
);
console.log(
  `\n# Summary (issue #38; ${new Date().toISOString().slice(0, 16)}Z, ${((Date.now() - t0) / 1000).toFixed(0)} s)\n`,
);
console.log(summary(env.BENCH_RESULTS, output));
rmSync(dir, { recursive: true, force: true });
if (failed.length) console.error(`\nfailed: ${failed.join(', ')}`);
process.exit(failed.length ? 1 : 0);
