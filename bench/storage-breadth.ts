// Storage breadth (issue 31), local driver, embedded default database, the built server:
// - a resumable (tus-js-client) upload of 100 MiB against a plain PUT of the same bytes (goal ≥ 0.8×);
// - a 1 MP JPEG resized to 400 px WebP: cold renders (ms each), and the cached rendition
//   against a static GET of an object of the same size (wrk, goal ≥ 0.8×).
// `node scripts/build.mjs && npx tsx bench/storage-breadth.ts` (short runs: seconds, 4 connections).
// BENCH_SMOKE=1: 4 MiB, one round of each.
import http from 'node:http';
import { rmSync } from 'node:fs';
import sharp from 'sharp';
import * as tus from 'tus-js-client';
import { PLINTH, benchDir, freePort, load, median, smoke, spawnServer } from './lib.js';

const MiB = 1024 * 1024;
const UPLOAD_MIB = smoke(100, 4);
const ROUNDS = smoke(3, 1);
const ADMIN_KEY = `ik_${'c'.repeat(64)}`;
const admin = { 'x-api-key': ADMIN_KEY };

function putBuffer(base: string, p: string, body: Buffer, type = 'application/octet-stream'): Promise<void> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        method: 'PUT',
        path: p,
        headers: { ...admin, 'content-type': type, 'content-length': body.length },
      },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`PUT ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function tusPut(base: string, key: string, body: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    new tus.Upload(body, {
      endpoint: `${base}/api/storage/upload/resumable`,
      headers: admin,
      metadata: { bucketName: 'bench', objectName: key, contentType: 'application/octet-stream' },
      retryDelays: [],
      storeFingerprintForResuming: false,
      onSuccess: () => resolve(),
      onError: reject,
    }).start();
  });
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

async function main() {
  const dir = benchDir('storage-breadth');
  const port = await freePort();
  const server = await spawnServer(PLINTH.cmd, PLINTH.args, {
    port,
    readyPath: '/api/health',
    env: {
      DATA_DIR: dir,
      ADMIN_API_KEY: ADMIN_KEY,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PLAN: 'off',
      DATABASE_URL: undefined,
    },
  });
  const base = server.url;
  try {
    const r = await fetch(`${base}/api/storage/buckets`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ bucketName: 'bench' }),
    });
    if (r.status !== 201) throw new Error(`bucket: ${r.status}`);

    // 100 MiB: plain PUT and resumable, alternating, 3 rounds each (after one warm-up each).
    const body = Buffer.alloc(UPLOAD_MIB * MiB, 5);
    await putBuffer(base, '/api/storage/buckets/bench/objects/warm-put.bin', body);
    await tusPut(base, 'warm-tus.bin', body);
    const puts: number[] = [];
    const tuses: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      puts.push(await timed(() => putBuffer(base, `/api/storage/buckets/bench/objects/put-${i}.bin`, body)));
      tuses.push(await timed(() => tusPut(base, `tus-${i}.bin`, body)));
    }
    const putMiBs = UPLOAD_MIB / (median(puts) / 1000);
    const tusMiBs = UPLOAD_MIB / (median(tuses) / 1000);
    console.log(`| ${UPLOAD_MIB} MiB upload | plain PUT MiB/s | resumable (tus) MiB/s | ratio (goal ≥ 0.8×) |`);
    console.log('|---|---|---|---|');
    console.log(
      `| median of ${ROUNDS} | ${putMiBs.toFixed(0)} | ${tusMiBs.toFixed(0)} | **${(tusMiBs / putMiBs).toFixed(2)}×** |`,
    );

    // A 1 MP JPEG (1000×1000, with detail) and its 400 px WebP rendition.
    const w = 1000;
    const raw = Buffer.alloc(w * w * 3);
    for (let i = 0; i < raw.length; i++) raw[i] = ((i % (w * 3)) * 255) / (w * 3) + ((i * 7919) % 23);
    const jpeg = await sharp(raw, { raw: { width: w, height: w, channels: 3 } })
      .jpeg({ quality: 85 })
      .toBuffer();
    await putBuffer(base, '/api/storage/buckets/bench/objects/photo.jpg', jpeg, 'image/jpeg');
    const cold: number[] = [];
    for (let q = 70; q < 75; q++) {
      cold.push(
        await timed(async () =>
          (
            await fetch(`${base}/api/storage/buckets/bench/objects/photo.jpg?width=400&format=webp&quality=${q}`)
          ).arrayBuffer(),
        ),
      );
    }
    const renditionUrl = `${base}/api/storage/buckets/bench/objects/photo.jpg?width=400&format=webp`;
    const rendition = Buffer.from(await (await fetch(renditionUrl)).arrayBuffer());
    await putBuffer(base, '/api/storage/buckets/bench/objects/static.webp', rendition, 'image/webp');
    const staticUrl = `${base}/api/storage/buckets/bench/objects/static.webp`;
    const runs = { cached: [] as number[], static: [] as number[] };
    for (let i = 0; i < ROUNDS; i++) {
      runs.static.push((await load({ url: staticUrl, seconds: 3, connections: 4, pid: server.pid })).rps);
      runs.cached.push((await load({ url: renditionUrl, seconds: 3, connections: 4, pid: server.pid })).rps);
    }
    const s = median(runs.static);
    const c = median(runs.cached);
    console.log(
      `\n1 MP JPEG (${(jpeg.length / 1024).toFixed(0)} KiB) → 400 px WebP (${(rendition.length / 1024).toFixed(1)} KiB)`,
    );
    console.log(
      '| cold render ms (median of 5) | static GET req/s | cached rendition req/s | cached / static (goal ≥ 0.8×) |',
    );
    console.log('|---|---|---|---|');
    console.log(`| ${median(cold).toFixed(0)} | ${s.toFixed(0)} | ${c.toFixed(0)} | **${(c / s).toFixed(2)}×** |`);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
