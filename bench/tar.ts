// Tar benchmark (issue #39 item 5): Plinth's own writer and reader (src/lib/tar.ts) against the
// tar-stream library on the same archive, in memory (no disk, no gzip: only the tar code is
// timed). Interleaved rounds, median MiB/s. Run alone: node --import tsx bench/tar.ts
// Decision and figures: docs/decisions.md ("tar").
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { END_OF_ARCHIVE, memoryEntry, readTar } from '../src/lib/tar.js';

const require = createRequire(import.meta.url);
// A dependency of a dependency: measured here before being taken on (not in package.json).
const tarStream = require('tar-stream') as typeof import('tar-stream');

const BIG = { count: 24, size: 4 * 1024 * 1024 }; // a cluster's segment files
const SMALL = { count: 4000, size: 4096 }; // catalog files, storage objects
const files = [
  ...Array.from({ length: BIG.count }, (_, i) => ({ name: `base/1/big-${i}`, data: Buffer.alloc(BIG.size, i) })),
  ...Array.from({ length: SMALL.count }, (_, i) => ({ name: `base/1/small-${i}`, data: Buffer.alloc(SMALL.size, i) })),
];
const total = files.reduce((n, f) => n + f.data.length, 0);

function ownPack(): Buffer[] {
  const out: Buffer[] = [];
  for (const f of files) for (const c of memoryEntry(f.name, f.data)) out.push(c);
  out.push(END_OF_ARCHIVE);
  return out;
}

async function libPack(): Promise<Buffer[]> {
  const pack = tarStream.pack();
  const out: Buffer[] = [];
  const done = (async () => {
    for await (const c of pack) out.push(c as Buffer);
  })();
  for (const f of files) pack.entry({ name: f.name, size: f.data.length, mode: 0o600, mtime: new Date() }, f.data);
  pack.finalize();
  await done;
  return out;
}

// The archive as a reader gets it from a file or a socket: 64 KiB chunks.
function chunks(parts: Buffer[]): Buffer[] {
  const all = Buffer.concat(parts);
  const out: Buffer[] = [];
  for (let i = 0; i < all.length; i += 65536) out.push(all.subarray(i, i + 65536));
  return out;
}

async function ownRead(archive: Buffer[]): Promise<number> {
  let bytes = 0;
  await readTar(
    (async function* () {
      yield* archive;
    })(),
    { entry: () => {}, data: (c) => (bytes += c.length), end: () => {} },
  );
  return bytes;
}

async function libRead(archive: Buffer[]): Promise<number> {
  const extract = tarStream.extract();
  let bytes = 0;
  const feed = (async () => {
    for (const c of archive) if (!extract.write(c)) await new Promise<void>((r) => extract.once('drain', () => r()));
    extract.end(undefined); // streamx's end() takes an optional last chunk, typed as required
  })();
  for await (const entry of extract) for await (const c of entry) bytes += (c as Buffer).length;
  await feed;
  return bytes;
}

async function timed(fn: () => Promise<unknown> | unknown): Promise<number> {
  const t = performance.now();
  await fn();
  return total / 1024 / 1024 / ((performance.now() - t) / 1000);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const archive = chunks(ownPack());
  if ((await ownRead(chunks(await libPack()))) !== total || (await libRead(archive)) !== total)
    throw new Error('the two implementations do not read each other’s archives');
  const rounds = Number(process.env.TAR_ROUNDS ?? 7);
  const r: Record<string, number[]> = { ownPack: [], libPack: [], ownRead: [], libRead: [] };
  for (let i = 0; i < rounds; i++) {
    r.ownPack!.push(await timed(ownPack));
    r.libPack!.push(await timed(libPack));
    r.ownRead!.push(await timed(() => ownRead(archive)));
    r.libRead!.push(await timed(() => libRead(archive)));
  }
  const m = Object.fromEntries(Object.entries(r).map(([k, v]) => [k, median(v)]));
  console.log(
    `tar, ${BIG.count} x ${BIG.size / 1048576} MiB + ${SMALL.count} x ${SMALL.size / 1024} KiB (${(total / 1048576).toFixed(0)} MiB), median of ${rounds}, MiB/s:`,
  );
  console.log(`  write: own ${m.ownPack!.toFixed(0)}, tar-stream ${m.libPack!.toFixed(0)}`);
  console.log(`  read:  own ${m.ownRead!.toFixed(0)}, tar-stream ${m.libRead!.toFixed(0)}`);
}

await main();
