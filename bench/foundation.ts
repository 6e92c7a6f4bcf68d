// Foundation benchmark: /api/health req/s against a bare node:http server, time from start
// to the first healthy answer on an existing data dir, and idle resident memory.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PLINTH, compare, freePort, median, pinnedCpus, requireWrk, rssMiB, smoke, spawnServer } from './lib.js';

async function benchFoundation(): Promise<void> {
  await requireWrk();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'plinth-bench-data-'));
  const env = { DATA_DIR: dataDir, LOG_LEVEL: 'warn', RATE_LIMIT_PLAN: 'off' };
  try {
    // First start creates the data dir; the timed starts below reuse it.
    let port = await freePort();
    const first = await spawnServer(PLINTH.cmd, PLINTH.args, {
      env: { ...env, PORT: String(port) },
      port,
      readyPath: '/api/health',
    });
    await first.stop();

    const startTimes: number[] = [];
    for (let i = 0; i < smoke(3, 1); i++) {
      port = await freePort();
      const s = await spawnServer(PLINTH.cmd, PLINTH.args, {
        env: { ...env, PORT: String(port) },
        port,
        readyPath: '/api/health',
      });
      startTimes.push(s.readyMs);
      await s.stop();
    }

    // Both servers on one CPU, wrk on another (when the machine has two).
    const cpus = await pinnedCpus();
    port = await freePort();
    const plinth = await spawnServer(PLINTH.cmd, PLINTH.args, {
      env: { ...env, PORT: String(port) },
      port,
      readyPath: '/api/health',
      cpu: cpus?.server,
    });
    await new Promise((r) => setTimeout(r, smoke(2000, 300)));
    const idleRss = rssMiB(plinth.pid);
    const basePort = await freePort();
    const base = await spawnServer(process.execPath, ['bench/baseline-health.mjs'], {
      env: { PORT: String(basePort) },
      port: basePort,
      cpu: cpus?.server,
    });
    // The framework's own share: bare Fastify with the same response schema, no hooks, no logger.
    const fastifyPort = await freePort();
    const fastify = await spawnServer(process.execPath, ['bench/baseline-fastify.mjs'], {
      env: { PORT: String(fastifyPort) },
      port: fastifyPort,
      readyPath: '/api/health',
      cpu: cpus?.server,
    });
    try {
      const title = `GET /api/health vs bare node:http (goal ≥ 0.8×; ${cpus ? `servers on CPU ${cpus.server}, wrk on CPU ${cpus.load}` : 'unpinned'})`;
      const run = { seconds: 3, connections: 32, cpu: cpus?.load };
      await compare(
        title,
        [
          {
            name: 'health',
            baseline: { url: `${base.url}/api/health`, pid: base.pid, ...run },
            subject: { url: `${plinth.url}/api/health`, pid: plinth.pid, ...run },
          },
          {
            name: 'bare Fastify, same schema, no hooks',
            baseline: { url: `${base.url}/api/health`, pid: base.pid, ...run },
            subject: { url: `${fastify.url}/api/health`, pid: fastify.pid, ...run },
          },
        ],
        9,
      );
    } finally {
      await base.stop();
      await fastify.stop();
      await plinth.stop();
    }
    console.log(
      `\n- start to first healthy answer (existing data dir, PGlite): median ${median(startTimes).toFixed(0)} ms of ${startTimes.map((t) => t.toFixed(0)).join(', ')}`,
    );
    console.log(`- resident memory when idle: ${idleRss.toFixed(0)} MiB`);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await benchFoundation();
