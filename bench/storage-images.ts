// Image transforms, the worst case (issue #40): a 7000×7000 PNG (a few hundred KiB) read as
// AVIF at quality 100 with no width. For the server built here (dist/) and, when
// BENCH_IMAGES_BEFORE names another checkout's folder with its dist/ built (e.g. main before the
// render bounds), for that one too, in the same run: the answer and its time, the server's
// resident memory (the Node process, and its whole process tree: render processes included)
// at rest, at peak and 5 s after; then a burst of 8 different 2048-wide AVIF and WebP
// renditions at once, and the memory 5 s and 35 s after.
// `node --import tsx bench/storage-images.ts` (npm run bench -- storage-images builds first).
// BENCH_SMOKE=1: the same steps on a 1200×1200 PNG, 512-wide renditions and 1 s pauses.
import path from 'node:path';
import sharp from 'sharp';
import { PLINTH, benchDir, freePort, freshBenchDatabase, rssMiB, smoke, spawnServer, treeMemoryMiB } from './lib.js';

const ADMIN_KEY = `ik_${'i'.repeat(64)}`;
const SIDE = smoke(7000, 1200);
const WIDTH = smoke(2048, 512);
/** The pauses before memory is read again: 5 s, and 30 s for idle render processes to exit. */
const AFTER_MS = smoke(5000, 1000);
const IDLE_EXIT_MS = smoke(30_000, 1000);
const CLIENT_TIMEOUT_MS = Number(process.env.BENCH_IMAGES_TIMEOUT_MS ?? 180_000);

/** A 7000×7000 PNG of flat shapes: small on disk, 49 Mpx decoded (under the 50 Mpx input limit). */
async function bigPng(): Promise<Buffer> {
  let shapes = '';
  for (let i = 0; i < 60; i++) {
    const colour = ((i * 2654435761) >>> 0).toString(16).slice(0, 6).padStart(6, '0');
    shapes += `<circle cx="${(i * 997) % SIDE}" cy="${(i * 1777) % SIDE}" r="${200 + ((i * 37) % 600)}" fill="#${colour}"/>`;
  }
  const svg = `<svg width="${SIDE}" height="${SIDE}" xmlns="http://www.w3.org/2000/svg"><rect width="${SIDE}" height="${SIDE}" fill="#eee"/>${shapes}</svg>`;
  return sharp(Buffer.from(svg), { limitInputPixels: false }).png({ compressionLevel: 9, palette: true }).toBuffer();
}

interface Sampled {
  status: number | string;
  error: string;
  seconds: number;
  peakMain: number;
  peakTree: number;
}

/** Runs `requests` at once while sampling the server's memory every 100 ms. */
async function underWatch(pid: number, requests: Array<() => Promise<Response>>): Promise<Sampled[]> {
  let peakMain = rssMiB(pid);
  let peakTree = treeMemoryMiB(pid).rss;
  const timer = setInterval(() => {
    peakMain = Math.max(peakMain, rssMiB(pid));
    peakTree = Math.max(peakTree, treeMemoryMiB(pid).rss);
  }, 100);
  const results = await Promise.all(
    requests.map(async (send) => {
      const started = performance.now();
      try {
        const r = await send();
        const body = Buffer.from(await r.arrayBuffer());
        const error = r.ok ? '' : String(JSON.parse(body.toString()).error);
        return { status: r.status, error, seconds: (performance.now() - started) / 1000 };
      } catch (err) {
        return { status: (err as Error).name, error: '', seconds: (performance.now() - started) / 1000 };
      }
    }),
  );
  clearInterval(timer);
  return results.map((r) => ({ ...r, peakMain, peakTree }));
}

async function measure(label: string, cwd: string, png: Buffer): Promise<void> {
  const work = benchDir('plinth-bench-images-');
  const database = await freshBenchDatabase();
  const port = await freePort();
  const server = await spawnServer(PLINTH.cmd, PLINTH.args, {
    cwd,
    env: {
      DATA_DIR: path.join(work, 'data'),
      DATABASE_URL: database.url,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PLAN: 'off',
      ADMIN_API_KEY: ADMIN_KEY,
      PORT: String(port),
    },
    port,
    readyPath: '/api/health',
  });
  const admin = { 'x-api-key': ADMIN_KEY };
  try {
    const made = await fetch(`${server.url}/api/storage/buckets`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ bucketName: 'img', isPublic: true }),
    });
    if (made.status !== 201) throw new Error(`create bucket: ${made.status}`);
    const put = await fetch(`${server.url}/api/storage/buckets/img/objects/big.png`, {
      method: 'PUT',
      headers: { ...admin, 'content-type': 'image/png' },
      body: new Uint8Array(png),
    });
    if (put.status !== 200) throw new Error(`upload: ${put.status}`);
    const get = (query: string) => () =>
      fetch(`${server.url}/api/storage/buckets/img/objects/big.png?${query}`, {
        signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
      });
    const rest = { main: rssMiB(server.pid), tree: treeMemoryMiB(server.pid).rss };
    const [one] = await underWatch(server.pid, [get('format=avif&quality=100')]);
    await new Promise((r) => setTimeout(r, AFTER_MS));
    const after = { main: rssMiB(server.pid), tree: treeMemoryMiB(server.pid).rss };
    const burst = await underWatch(
      server.pid,
      Array.from({ length: 8 }, (_, i) => get(`format=${i % 2 ? 'webp' : 'avif'}&width=${WIDTH}&quality=${92 + i}`)),
    );
    await new Promise((r) => setTimeout(r, AFTER_MS));
    const afterBurst = { main: rssMiB(server.pid), tree: treeMemoryMiB(server.pid).rss };
    // Render processes idle for 30 s exit: the memory they took goes back to the system.
    await new Promise((r) => setTimeout(r, IDLE_EXIT_MS));
    const later = { main: rssMiB(server.pid), tree: treeMemoryMiB(server.pid).rss };
    const mib = (n: number) => `${Math.round(n)} MiB`;
    console.log(`\n${label} (${cwd})`);
    console.log(`  worst case: ${one!.status} ${one!.error} in ${one!.seconds.toFixed(1)} s`);
    console.log(
      `  RSS at rest ${mib(rest.main)} (tree ${mib(rest.tree)}), peak ${mib(one!.peakMain)} (tree ${mib(one!.peakTree)}), 5 s after ${mib(after.main)} (tree ${mib(after.tree)})`,
    );
    const counts = new Map<string, number>();
    for (const b of burst)
      counts.set(`${b.status} ${b.error}`.trim(), (counts.get(`${b.status} ${b.error}`.trim()) ?? 0) + 1);
    console.log(
      `  burst of 8: ${[...counts].map(([k, n]) => `${n}× ${k}`).join(', ')}; slowest ${Math.max(...burst.map((b) => b.seconds)).toFixed(1)} s`,
    );
    console.log(
      `  RSS peak ${mib(burst[0]!.peakMain)} (tree ${mib(burst[0]!.peakTree)}), 5 s after ${mib(afterBurst.main)} (tree ${mib(afterBurst.tree)}), 35 s after ${mib(later.main)} (tree ${mib(later.tree)})`,
    );
  } finally {
    await server.stop();
    await database.drop();
  }
}

const png = await bigPng();
console.log(
  `image transforms, worst case: a ${SIDE}×${SIDE} PNG of ${Math.round(png.length / 1024)} KiB as ?format=avif&quality=100 (client gives up after ${CLIENT_TIMEOUT_MS / 1000} s)`,
);
if (process.env.BENCH_IMAGES_BEFORE) await measure('before', path.resolve(process.env.BENCH_IMAGES_BEFORE), png);
await measure('after', process.cwd(), png);
