// Start benchmark: `npm start` runs compiled JavaScript (dist/, built by npm install) instead of
// loading the TypeScript source through tsx. Same run, interleaved: time from spawn to the first
// healthy answer on an existing data dir, and CPU per health request, source vs compiled.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PLINTH, PLINTH_SOURCE, compare, freePort, median, pinnedCpus, requireWrk, spawnServer } from './lib.js';

const ROUNDS = 7;

async function benchStart(): Promise<void> {
  await requireWrk();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'plinth-bench-start-'));
  const env = { DATA_DIR: dataDir, LOG_LEVEL: 'warn', RATE_LIMIT_PLAN: 'off' };
  const start = async (which: typeof PLINTH, cpu?: number) => {
    const port = await freePort();
    return spawnServer(which.cmd, which.args, { env: { ...env, PORT: String(port) }, port, readyPath: '/api/health', cpu });
  };
  try {
    await (await start(PLINTH)).stop(); // creates the data dir and its database
    const times = { source: [] as number[], compiled: [] as number[] };
    for (let i = 0; i < ROUNDS; i++) {
      for (const [name, which] of [['source', PLINTH_SOURCE], ['compiled', PLINTH]] as const) {
        const s = await start(which);
        times[name].push(s.readyMs);
        await s.stop();
      }
    }
    const cpus = await pinnedCpus();
    const source = await start(PLINTH_SOURCE, cpus?.server);
    const compiled = await start(PLINTH, cpus?.server);
    try {
      const run = { seconds: 3, connections: 32, cpu: cpus?.load };
      await compare(
        'GET /api/health: tsx source (baseline) vs compiled dist/ (plinth)',
        [{ name: 'health', baseline: { url: `${source.url}/api/health`, pid: source.pid, ...run }, subject: { url: `${compiled.url}/api/health`, pid: compiled.pid, ...run } }],
        5,
      );
    } finally {
      await source.stop();
      await compiled.stop();
    }
    const show = (xs: number[]) => `median ${median(xs).toFixed(0)} ms of ${xs.map((t) => t.toFixed(0)).join(', ')}`;
    console.log(`\n- start to first healthy answer, tsx source: ${show(times.source)}`);
    console.log(`- start to first healthy answer, compiled:   ${show(times.compiled)}`);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await benchStart();
