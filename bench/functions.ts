// Functions: warm invocation of a trivial function through Plinth (GET /functions/{slug}) against
// the same handler served by a bare Deno.serve, interleaved in one run (goal: added p50
// ≤ 2 ms, throughput ≥ 0.5×); then cold start: a save and the first call after it (goal p50 ≤ 50 ms),
// and the first call after a code change of a warm function. Then functions that import packages
// (issue #34): the deploy of one importing npm:@insforge/sdk with an empty package cache and
// again from the cache (goals: first ≤ 15 s, again ≤ 2 s), its first call after the deploy
// (goal p50 ≤ 150 ms), its warm latency beside the trivial function's, and the memory of its
// process. BENCH_SMOKE=1 runs every part with few samples (bench/lib.ts: 1 s wrk rounds).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { denoBinary } from '../src/functions/runtime/deno.js';
import {
  PLINTH,
  benchDir,
  compare,
  freePort,
  load,
  median,
  requireWrk,
  rssMiB,
  smoke,
  spawnServer,
  type Server,
} from './lib.js';

const SDK_FUNCTION = (i: number) => `import { createClient } from 'npm:@insforge/sdk';
export default async (req: Request) => {
  const client = createClient({ baseUrl: Deno.env.get('INSFORGE_BASE_URL') });
  return new Response('sdk ${i} ' + typeof client.database.from);
};`;

const HANDLER = `() => new Response('hello from a function', { headers: { 'content-type': 'text/plain' } })`;

// The Deno processes Plinth started (their CPU is not in Plinth's own figure).
function denoChildren(pid: number): number[] {
  const kids: number[] = [];
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    for (const c of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean)) {
      if (readFileSync(`/proc/${c}/cmdline`, 'utf8').includes('deno-host.js')) kids.push(Number(c));
    }
  }
  return kids;
}

// A bare node:http relay: each request forwarded over a Unix socket (keep-alive) with undici,
// the client Plinth uses, the answer read whole and sent back.
const RELAY = `import http from 'node:http';
import { Pool } from '${import.meta.resolve('undici')}';
const [socketPath, port] = process.argv.slice(2);
const pool = new Pool('http://localhost', { socketPath, connections: 256 });
http.createServer((req, res) => {
  let status = 0;
  let headers = {};
  const chunks = [];
  pool.dispatch({ path: req.url, method: req.method, headers: req.headers, body: req.method === 'GET' || req.method === 'HEAD' ? null : req }, {
    onRequestStart() {},
    onResponseStart(_c, s, h) { status = s; headers = h; },
    onResponseData(_c, chunk) { chunks.push(chunk); },
    onResponseEnd() { res.writeHead(status, headers); res.end(Buffer.concat(chunks)); },
    onResponseError() { res.destroy(); },
  });
}).listen(Number(port), '127.0.0.1');
`;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

async function benchFunctions(): Promise<void> {
  await requireWrk();
  const dir = benchDir('plinth-bench-fn-');
  const servers: Server[] = [];
  try {
    const adminKey = `ik_${randomBytes(32).toString('hex')}`;
    const port = await freePort();
    const plinth = await spawnServer(PLINTH.cmd, PLINTH.args, {
      env: {
        DATA_DIR: path.join(dir, 'data'),
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        RATE_LIMIT_PLAN: 'off',
        ADMIN_API_KEY: adminKey,
      },
      port,
      readyPath: '/api/health',
      timeoutMs: 180_000,
    });
    servers.push(plinth);
    const bareFile = path.join(dir, 'bare.js');
    writeFileSync(
      bareFile,
      `Deno.serve({ port: Number(Deno.args[0]), hostname: '127.0.0.1', onListen() {} }, ${HANDLER});\n`,
    );
    const barePort = await freePort();
    const bare = await spawnServer(denoBinary(), ['run', '--allow-net', bareFile, String(barePort)], {
      port: barePort,
      env: { NO_COLOR: '1' },
    });
    servers.push(bare);
    // The least any Node.js front can add: a bare node:http server relaying each request to
    // the same handler on Deno.serve over a Unix socket, as Plinth relays to a function.
    const sock = path.join(dir, 'bare.sock');
    const bareUnixFile = path.join(dir, 'bare-unix.js');
    writeFileSync(
      bareUnixFile,
      `Deno.serve({ path: Deno.args[0], onListen() { console.log('listening'); } }, ${HANDLER});\n`,
    );
    const bareUnix = spawn(
      denoBinary(),
      ['run', '--allow-net', `--allow-read=${sock}`, `--allow-write=${sock}`, bareUnixFile, sock],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await once(bareUnix.stdout!, 'data');
    const proxyFile = path.join(dir, 'proxy.mjs');
    writeFileSync(proxyFile, RELAY);
    const proxyPort = await freePort();
    const proxy = await spawnServer(process.execPath, [proxyFile, sock, String(proxyPort)], { port: proxyPort });
    servers.push(proxy, { proc: bareUnix, pid: bareUnix.pid!, url: '', stop: async () => void bareUnix.kill() });

    const admin = { 'x-api-key': adminKey, 'content-type': 'application/json' };
    const deploy = async (slug: string, code: string) => {
      const r = await fetch(`${plinth.url}/api/functions`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ name: slug, slug, code }),
      });
      if (r.status !== 201) throw new Error(`deploy failed: ${r.status} ${await r.text()}`);
    };
    const timedCall = async (slug: string) => {
      const t0 = performance.now();
      const r = await fetch(`${plinth.url}/functions/${slug}`);
      await r.text();
      if (r.status !== 200) throw new Error(`call failed: ${r.status}`);
      return performance.now() - t0;
    };
    const settle = () => new Promise((r) => setTimeout(r, 1000));

    await deploy('trivial', `export default ${HANDLER};`);
    for (let i = 0; i < smoke(200, 20); i++) await timedCall('trivial');
    await benchPackages(plinth, deploy, timedCall);

    for (const connections of [1, 16]) {
      await compare(
        `Trivial function: Plinth vs bare Deno.serve, ${connections} connection(s) (goal: +p50 ≤ 2 ms, ≥ 0.5×)`,
        [
          {
            name: `warm invocation, c=${connections}`,
            baseline: { url: `${bare.url}/`, pid: bare.pid, seconds: 5, connections },
            subject: { url: `${plinth.url}/functions/trivial`, pid: plinth.pid, seconds: 5, connections },
          },
        ],
      );
    }

    await compare(
      'Trivial function: Plinth vs a bare node:http relay to Deno.serve, 16 connections (no goal: the floor for any Node.js front)',
      [
        {
          name: 'warm invocation, c=16',
          baseline: { url: `${proxy.url}/`, pid: proxy.pid, seconds: 5, connections: 16 },
          subject: { url: `${plinth.url}/functions/trivial`, pid: plinth.pid, seconds: 5, connections: 16 },
        },
      ],
    );

    // The function's own process: its CPU per call, measured on one more run.
    const hosts = denoChildren(plinth.pid);
    for (const pid of hosts) {
      const r = await load({ url: `${plinth.url}/functions/trivial`, pid, seconds: 5, connections: 16 });
      const p = await load({ url: `${plinth.url}/functions/trivial`, pid: plinth.pid, seconds: 5, connections: 16 });
      if ((r.cpuMsPerReq ?? 0) > 0.001) {
        console.log(
          `\n- CPU per call, c=16: Plinth (Node) ${p.cpuMsPerReq?.toFixed(3)} ms + the function's Deno process ${r.cpuMsPerReq?.toFixed(3)} ms (${r.rps.toFixed(0)} req/s)`,
        );
      }
    }

    // Cold start: a new function, from the save (which answers once the module is loaded) to
    // the end of its first call.
    const timed = async (work: () => Promise<unknown>) => {
      const t0 = performance.now();
      await work();
      return performance.now() - t0;
    };
    const cold: number[] = [];
    const saves: number[] = [];
    for (let i = 0; i < smoke(12, 2); i++) {
      await settle(); // let the spare process start, as it would between deploys
      const saved = await timed(() => deploy(`cold-${i}`, `export default ${HANDLER};`));
      saves.push(saved);
      cold.push(saved + (await timedCall(`cold-${i}`)));
    }
    // Code change: the warm process reloads its worker.
    const reload: number[] = [];
    for (let i = 0; i < smoke(12, 2); i++) {
      const saved = await timed(async () => {
        const r = await fetch(`${plinth.url}/api/functions/trivial`, {
          method: 'PUT',
          headers: admin,
          body: JSON.stringify({ code: `export default () => new Response('v${i}');` }),
        });
        if (r.status !== 200) throw new Error(`update failed: ${r.status}`);
      });
      reload.push(saved + (await timedCall('trivial')));
    }
    // Two functions saved back to back: the second may find no spare process ready.
    const fullyCold: number[] = [];
    for (let i = 0; i < smoke(6, 1); i++) {
      await deploy(`burst-a-${i}`, `export default ${HANDLER};`); // takes the spare
      const saved = await timed(() => deploy(`burst-b-${i}`, `export default ${HANDLER};`)); // may wait for a new process
      fullyCold.push(saved + (await timedCall(`burst-b-${i}`)));
    }
    const line = (name: string, xs: number[]) =>
      console.log(
        `- ${name}: p50 ${median(xs).toFixed(1)} ms, p90 ${pct(xs, 90).toFixed(1)} ms (n=${xs.length}; ${xs.map((x) => x.toFixed(0)).join(', ')})`,
      );
    console.log(
      '\n## Cold start (save, which loads the module, then the first call: wall time from the client; goal p50 ≤ 50 ms)\n',
    );
    line('save and first call of a new function (spare process ready)', cold);
    line('  of which the save', saves);
    line('save and first call after a code change (worker reloaded in the warm process)', reload);
    line('two functions saved back to back, save and first call of the second', fullyCold);
  } finally {
    for (const s of servers.reverse()) await s.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The function importing the InsForge SDK beside the trivial one (issue #34). */
async function benchPackages(
  plinth: Server,
  deploy: (slug: string, code: string) => Promise<void>,
  timedCall: (slug: string) => Promise<number>,
): Promise<void> {
  const timed = async (work: () => Promise<unknown>) => {
    const t0 = performance.now();
    await work();
    return performance.now() - t0;
  };
  const n = smoke(12, 2);
  const rss = () => denoChildren(plinth.pid).reduce((sum, pid) => sum + rssMiB(pid), 0);
  const rssBefore = rss();
  const first = await timed(() => deploy('sdk-0', SDK_FUNCTION(0)));
  const firstCall = await timedCall('sdk-0');
  await new Promise((r) => setTimeout(r, 1000));
  const rssAfter = rss();
  const again: number[] = [];
  const coldCall: number[] = [];
  for (let i = 1; i <= n; i++) {
    again.push(await timed(() => deploy(`sdk-${i}`, SDK_FUNCTION(i))));
    coldCall.push(await timedCall(`sdk-${i}`));
    await new Promise((r) => setTimeout(r, 1000)); // the spare process starts, as between deploys
  }
  const warm = { sdk: [] as number[], trivial: [] as number[] };
  for (let i = 0; i < smoke(400, 20); i++) {
    warm.sdk.push(await timedCall('sdk-0'));
    warm.trivial.push(await timedCall('trivial'));
  }
  const ms = (x: number) => `${x.toFixed(1)} ms`;
  console.log('\n## Functions that import packages (npm:@insforge/sdk, bundled at deploy)\n');
  console.log(
    `- deploy with an empty package cache (first): ${ms(first)} (goal ≤ 15000 ms); its first call ${ms(firstCall)}`,
  );
  console.log(
    `- deploy again, imports from the cache: p50 ${ms(median(again))}, p90 ${ms(pct(again, 90))} (goal ≤ 2000 ms; n=${n})`,
  );
  console.log(
    `- first call after the deploy (cold start): p50 ${ms(median(coldCall))}, p90 ${ms(pct(coldCall, 90))} (goal ≤ 150 ms)`,
  );
  const added = median(warm.sdk) - median(warm.trivial);
  console.log(
    `- warm call, sequential: SDK function p50 ${ms(median(warm.sdk))}, trivial p50 ${ms(median(warm.trivial))}, added ${ms(added)} (goal ≤ 2 ms)`,
  );
  console.log(
    `- memory of the Deno processes: ${rssBefore.toFixed(0)} MiB before the SDK function, ${rssAfter.toFixed(0)} MiB with it loaded (+${(rssAfter - rssBefore).toFixed(0)} MiB)`,
  );
}

await benchFunctions();
