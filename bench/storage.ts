// Storage benchmark (local driver): 100 MiB upload and download through Plinth against
// copying the same bytes with node:fs streams in the same run (goal ≥ 0.5×); 4 KiB PUT and
// GET req/s against a bare node:http + node:fs server; resident memory of the server while
// 1 GiB streams up and down (goal: grows < 64 MiB). BENCH_SMOKE=1: 32 MiB and one round of 8 MiB.
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  PLINTH,
  benchDir,
  freshBenchDatabase,
  compare,
  freePort,
  median,
  requireWrk,
  rssMiB,
  smoke,
  spawnServer,
  type Server,
} from './lib.js';

const MiB = 1024 * 1024;
/** The object streamed for the memory figure, and the one timed against node:fs (in MiB). */
const LARGE_MIB = smoke(1024, 32);
const TIMED_MIB = smoke(100, 8);
const ADMIN_KEY = `ik_${'b'.repeat(64)}`;

/** `size` bytes from one reused 1 MiB block: the client costs as little as possible. */
function bytes(size: number): Readable {
  const block = Buffer.alloc(MiB, 7);
  let sent = 0;
  return new Readable({
    highWaterMark: MiB,
    read() {
      if (sent >= size) return void this.push(null);
      const n = Math.min(MiB, size - sent);
      sent += n;
      this.push(n === MiB ? block : block.subarray(0, n));
    },
  });
}

const sink = () =>
  new Writable({
    highWaterMark: MiB,
    write(_c, _e, cb) {
      cb();
    },
  });

function put(base: string, p: string, size: number): Promise<void> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        method: 'PUT',
        path: p,
        headers: { 'x-api-key': ADMIN_KEY, 'content-type': 'application/octet-stream', 'content-length': size },
      },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`PUT ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    bytes(size).pipe(req);
  });
}

function get(base: string, p: string): Promise<number> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    http
      .get({ host: u.hostname, port: u.port, path: p }, (res) => {
        let n = 0;
        res.on('data', (d: Buffer) => (n += d.length));
        res.on('end', () => (res.statusCode === 200 ? resolve(n) : reject(new Error(`GET ${res.statusCode}`))));
      })
      .on('error', reject);
  });
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return (performance.now() - t0) / 1000;
}

// Baseline for small objects: node:http with the same temp-file-and-rename write and a
// streamed read, no framework, no auth, no metadata.
const BASELINE_SERVER = `
const http = require('node:http'); const fs = require('node:fs'); const path = require('node:path');
const dir = process.env.DIR; let n = 0;
http.createServer((req, res) => {
  const file = path.join(dir, 'obj-' + encodeURIComponent(req.url));
  if (req.method === 'PUT') {
    const tmp = path.join(dir, 'tmp-' + (n++));
    req.pipe(fs.createWriteStream(tmp)).on('finish', () => fs.rename(tmp, file, () => { res.setHeader('content-type', 'application/json'); res.end('{"ok":true}'); }));
  } else if (req.url === '/health') { res.end('ok'); }
  else { fs.stat(file, (e, s) => { if (e) { res.statusCode = 404; return res.end(); } res.setHeader('content-length', s.size); fs.createReadStream(file).pipe(res); }); }
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

export async function benchStorage(): Promise<void> {
  await requireWrk();
  const work = benchDir('plinth-bench-storage-');
  const port = await freePort();
  const plinth = await spawnServer(PLINTH.cmd, PLINTH.args, {
    env: {
      DATA_DIR: path.join(work, 'data'),
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PLAN: 'off',
      ADMIN_API_KEY: ADMIN_KEY,
      PORT: String(port),
      MAX_UPLOAD_BYTES: String(1100 * MiB),
    },
    port,
    readyPath: '/api/health',
  });
  const basePort = await freePort();
  const baseDir = mkdtempSync(path.join(work, 'baseline-'));
  const base = await spawnServer(process.execPath, ['-e', BASELINE_SERVER], {
    env: { PORT: String(basePort), DIR: baseDir },
    port: basePort,
    readyPath: '/health',
  });
  try {
    const r = await fetch(`${plinth.url}/api/storage/buckets`, {
      method: 'POST',
      headers: { 'x-api-key': ADMIN_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ bucketName: 'bench' }),
    });
    if (r.status !== 201) throw new Error(`create bucket: ${r.status}`);

    // ---- 1 GiB up and down first, on a freshly started server: resident memory ----
    const GIB = LARGE_MIB * MiB;
    const rss0 = rssMiB(plinth.pid);
    let peak = rss0;
    const timer = setInterval(() => (peak = Math.max(peak, rssMiB(plinth.pid))), 50);
    const upSecs = await timed(() => put(plinth.url, '/api/storage/buckets/bench/objects/large/1gib.bin', GIB));
    const received = await get(plinth.url, '/api/storage/buckets/bench/objects/large/1gib.bin');
    clearInterval(timer);
    if (received !== GIB) throw new Error(`downloaded ${received} bytes, not ${GIB}`);
    console.log(`\n## ${LARGE_MIB} MiB streamed up (${upSecs.toFixed(1)} s) and down through Plinth\n`);
    console.log(
      `- server RSS before ${rss0.toFixed(0)} MiB, peak ${peak.toFixed(0)} MiB: **+${(peak - rss0).toFixed(0)} MiB** (goal < 64 MiB)`,
    );

    // ---- 100 MiB throughput, interleaved with node:fs copies of the same bytes ----
    const SIZE = TIMED_MIB * MiB;
    const objectPath = '/api/storage/buckets/bench/objects/large/100mib.bin';
    const fsFile = path.join(work, 'fs-copy.bin');
    const up = { plinth: [] as number[], fs: [] as number[], http: [] as number[] };
    const down = { plinth: [] as number[], fs: [] as number[], http: [] as number[] };
    for (let round = 0; round < smoke(3, 1); round++) {
      up.fs.push(
        await timed(async () => {
          const tmp = `${fsFile}.tmp`;
          await pipeline(bytes(SIZE), createWriteStream(tmp));
          await rename(tmp, fsFile);
        }),
      );
      up.http.push(await timed(() => put(base.url, '/large-100mib', SIZE)));
      up.plinth.push(await timed(() => put(plinth.url, objectPath, SIZE)));
      down.fs.push(await timed(() => pipeline(createReadStream(fsFile, { highWaterMark: 256 * 1024 }), sink())));
      down.http.push(await timed(() => get(base.url, '/large-100mib')));
      down.plinth.push(await timed(() => get(plinth.url, objectPath)));
    }
    const mibs = (secs: number[]) => TIMED_MIB / median(secs);
    console.log(`\n## ${TIMED_MIB} MiB object through Plinth vs node:fs stream copy of the same bytes (goal ≥ 0.5×)\n`);
    console.log(
      '| direction | node:fs copy MiB/s | bare node:http + fs MiB/s | Plinth MiB/s | Plinth / fs | Plinth / bare http |',
    );
    console.log('|---|---|---|---|---|---|');
    for (const [name, d] of [
      ['upload', up],
      ['download', down],
    ] as const) {
      console.log(
        `| ${name} | ${mibs(d.fs).toFixed(0)} | ${mibs(d.http).toFixed(0)} | ${mibs(d.plinth).toFixed(0)} | **${(mibs(d.plinth) / mibs(d.fs)).toFixed(2)}×** | ${(mibs(d.plinth) / mibs(d.http)).toFixed(2)}× |`,
      );
    }

    await smallObjects(plinth, base, 'default database');
  } finally {
    await plinth.stop();
    await base.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

/** 4 KiB PUT and GET req/s of `plinth` (bucket `bench` exists) against the bare server. */
async function smallObjects(plinth: Server, base: Server, label: string): Promise<void> {
  const small = 'x'.repeat(4096);
  await fetch(`${plinth.url}/api/storage/buckets/bench/objects/small/get.bin`, {
    method: 'PUT',
    headers: { 'x-api-key': ADMIN_KEY, 'content-type': 'application/octet-stream' },
    body: small,
  });
  await fetch(`${base.url}/small/get.bin`, { method: 'PUT', body: small });
  const putLua = (prefix: string, headers: Record<string, string>) => `
    local n = 0
    local headers = { ${Object.entries(headers)
      .map(([k, v]) => `["${k}"] = "${v}"`)
      .join(', ')} }
    local body = string.rep("x", 4096)
    request = function()
      n = n + 1
      return wrk.format("PUT", "${prefix}" .. (n % 500), headers, body)
    end`;
  await compare(`4 KiB objects (${label}): Plinth vs bare node:http + node:fs`, [
    {
      name: 'PUT 4 KiB (500 keys, replaced in turn)',
      baseline: {
        url: base.url,
        lua: putLua('/small/put-', { 'content-type': 'application/octet-stream' }),
        pid: base.pid,
        seconds: 4,
        connections: 8,
      },
      subject: {
        url: plinth.url,
        lua: putLua('/api/storage/buckets/bench/objects/small/put-', {
          'x-api-key': ADMIN_KEY,
          'content-type': 'application/octet-stream',
        }),
        pid: plinth.pid,
        seconds: 4,
        connections: 8,
      },
    },
    {
      name: 'GET 4 KiB (public bucket)',
      baseline: { url: `${base.url}/small/get.bin`, pid: base.pid, seconds: 4, connections: 16 },
      subject: {
        url: `${plinth.url}/api/storage/buckets/bench/objects/small/get.bin`,
        pid: plinth.pid,
        seconds: 4,
        connections: 16,
      },
    },
  ]);
}

/**
 * `--small`: only the 4 KiB objects, on the default database and, when BENCH_DATABASE_URL
 * (or TEST_DATABASE_URL) names a server Postgres, on a fresh database of it, in the same run.
 */
export async function benchSmallObjects(): Promise<void> {
  await requireWrk();
  const work = benchDir('plinth-bench-small-');
  const basePort = await freePort();
  const base = await spawnServer(process.execPath, ['-e', BASELINE_SERVER], {
    env: { PORT: String(basePort), DIR: mkdtempSync(path.join(work, 'baseline-')) },
    port: basePort,
    readyPath: '/health',
  });
  const admin = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  const database = admin ? await freshBenchDatabase(admin) : null;
  const targets: Array<{ label: string; env: Record<string, string> }> = [{ label: 'default database', env: {} }];
  if (database) targets.push({ label: 'server Postgres', env: { DATABASE_URL: database.url } });
  try {
    for (const target of targets) {
      const port = await freePort();
      const plinth = await spawnServer(
        PLINTH.cmd,
        [
          ...(process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : []),
          ...PLINTH.args,
        ],
        {
          env: {
            DATA_DIR: path.join(work, `data-${port}`),
            LOG_LEVEL: 'warn',
            RATE_LIMIT_PLAN: 'off',
            ADMIN_API_KEY: ADMIN_KEY,
            PORT: String(port),
            ...target.env,
          },
          port,
          readyPath: '/api/health',
        },
      );
      try {
        const r = await fetch(`${plinth.url}/api/storage/buckets`, {
          method: 'POST',
          headers: { 'x-api-key': ADMIN_KEY, 'content-type': 'application/json' },
          body: JSON.stringify({ bucketName: 'bench' }),
        });
        if (r.status !== 201) throw new Error(`create bucket: ${r.status}`);
        await smallObjects(plinth, base, target.label);
      } finally {
        await plinth.stop();
      }
    }
  } finally {
    await base.stop();
    await database?.drop();
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`)
  await (process.argv.includes('--small') ? benchSmallObjects() : benchStorage());
