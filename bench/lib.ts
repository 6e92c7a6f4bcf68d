// Shared benchmark helpers: wrk as the load generator (C, cheap on the shared cores), the
// server's CPU time from /proc, interleaved rounds with medians, and a printed ratio.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, chmodSync, readFileSync, readdirSync, writeFileSync, mkdtempSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { databaseRoles } from '../src/db/owner.js';

const run = promisify(execFile);
const CLK_TCK = 100; // Linux USER_HZ

/**
 * BENCH_SMOKE=1 (`npm run bench:smoke`, run by CI): every benchmark runs to completion with
 * tiny sizes, one round of one second per case and no warm-up, so a crash fails the build in
 * minutes. The figures it prints mean nothing.
 */
export const SMOKE = process.env.BENCH_SMOKE === '1';

/**
 * Records one figure for the summary `npm run bench` prints at the end (bench/summary.ts):
 * a JSON line in the file BENCH_RESULTS names (set by bench/run.ts; nothing when run alone).
 */
export function record(key: string, value: number, extra: Record<string, unknown> = {}): void {
  const file = process.env.BENCH_RESULTS;
  if (file) appendFileSync(file, `${JSON.stringify({ key, value, ...extra })}\n`);
}

/** `full` normally, `smoke` under BENCH_SMOKE=1. */
export const smoke = <T>(full: T, small: T): T => (SMOKE ? small : full);

export interface LoadOptions {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** A wrk Lua script (replaces method/headers/body), e.g. to vary each request. */
  lua?: string;
  seconds?: number;
  connections?: number;
  threads?: number;
  /** The server's pid: its CPU time over the run gives CPU ms per request. */
  pid?: number;
  /** Runs wrk on this CPU only (see `pinnedCpus`). */
  cpu?: number;
  /** More processes whose CPU the requests cost (e.g. Postgres backends), asked at the start. */
  otherPids?: () => Promise<number[]>;
}

export interface LoadResult {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  cpuMsPerReq: number | null;
  /** CPU ms of `otherPids` per request (see `watchCpu`). */
  otherCpuMsPerReq?: number;
  errors: number;
}

/** Fails with a clear message when wrk is missing. */
export async function requireWrk(): Promise<void> {
  try {
    await run('wrk', ['--version']).catch((e) => {
      if (e.code === 'ENOENT') throw e;
    });
  } catch {
    throw new Error('The benchmarks need wrk: apt-get install -y wrk');
  }
}

/**
 * CPU time (user+system) of a process and all its threads, in ms (`/proc/<pid>/stat`, in
 * clock ticks): Node's GC and libuv threads count. For single-threaded Postgres backends the
 * finer `tryCpuMs` below is used instead.
 */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
}

/**
 * CPU ms of a process's main thread from the scheduler's own count (`/proc/<pid>/schedstat`,
 * ns; other threads are not in it, so it suits single-threaded processes), or null for a
 * process that is gone: `stat`'s ticks sample whoever runs at each 10 ms tick, too coarse
 * for a backend that runs a few ms a second.
 */
const tryCpuMs = (pid: number): number | null => {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return null;
  }
};

/**
 * The CPU ms the processes `pids()` lists spend until `stop()`, listed again every 250 ms: a
 * backend a pool opens during the run counts from its start, one it closes up to its last
 * sample (a pool's connections come and go under load; a list taken once missed most of them).
 */
function watchCpu(pids: () => Promise<number[]>): { started: Promise<void>; stop: () => Promise<number> } {
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  const sample = async (initial: boolean) => {
    for (const p of await pids().catch(() => [])) {
      const ms = tryCpuMs(p);
      if (ms === null) continue;
      if (!first.has(p)) first.set(p, initial ? ms : 0);
      last.set(p, ms);
    }
  };
  const started = sample(true);
  let chain = started;
  const timer = setInterval(() => {
    chain = chain.then(() => sample(false));
  }, 250);
  return {
    started,
    stop: async () => {
      clearInterval(timer);
      await chain;
      await sample(false);
      let ms = 0;
      for (const [p, f] of first) ms += Math.max(0, (last.get(p) ?? f) - f);
      return ms;
    },
  };
}

/** Resident memory of a process in MiB. */
export function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

function parseDuration(s: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(s.trim());
  if (!m) return NaN;
  const v = Number(m[1]);
  return m[2] === 'us' ? v / 1000 : m[2] === 'ms' ? v : m[2] === 's' ? v * 1000 : v * 60_000;
}

let scriptDir: string | null = null;
function luaFile(lua: string): string {
  scriptDir ??= mkdtempSync(path.join(tmpdir(), 'plinth-bench-'));
  const file = path.join(scriptDir, `s${Math.random().toString(36).slice(2)}.lua`);
  writeFileSync(file, lua);
  return file;
}

function requestLua(o: LoadOptions): string {
  const lines = [`wrk.method = ${JSON.stringify(o.method ?? 'GET')}`];
  for (const [k, v] of Object.entries(o.headers ?? {}))
    lines.push(`wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`);
  if (o.body !== undefined) lines.push(`wrk.body = ${JSON.stringify(o.body)}`);
  return lines.join('\n');
}

/**
 * CPUs for a single-process server and its load generator, when the machine has two or more:
 * unpinned, wrk and the server fight over the same cores and the heavier server loses more
 * than its own cost. Pinned, each has a core of its own. Null where taskset is missing.
 */
export async function pinnedCpus(): Promise<{ server: number; load: number } | null> {
  if (availableParallelism() < 2) return null;
  try {
    await run('taskset', ['-c', '0', 'true']);
    return { server: 1, load: 0 };
  } catch {
    return null;
  }
}

/** A command line, run on one CPU when `cpu` is given. */
function pinned(cpu: number | undefined, cmd: string, args: string[]): [string, string[]] {
  return cpu === undefined ? [cmd, args] : ['taskset', ['-c', String(cpu), cmd, ...args]];
}

/** One wrk run against `url`. */
export async function load(o: LoadOptions): Promise<LoadResult> {
  const seconds = SMOKE ? 1 : (o.seconds ?? 5);
  const cpu0 = o.pid ? cpuMs(o.pid) : 0;
  const others = o.otherPids ? watchCpu(o.otherPids) : null;
  await others?.started;
  const args = [
    `-t${o.threads ?? 1}`,
    `-c${o.connections ?? 16}`,
    `-d${seconds}s`,
    '--latency',
    '-s',
    luaFile(o.lua ?? requestLua(o)),
    o.url,
  ];
  const { stdout } = await run(...pinned(o.cpu, 'wrk', args), { maxBuffer: 1 << 20 });
  const cpu1 = o.pid ? cpuMs(o.pid) : 0;
  const otherMs = (await others?.stop()) ?? 0;
  const total = Number(/(\d+) requests in/.exec(stdout)?.[1] ?? 0);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? 0);
  const p50 = parseDuration(/\n\s+50%\s+(\S+)/.exec(stdout)?.[1] ?? '');
  const p99 = parseDuration(/\n\s+99%\s+(\S+)/.exec(stdout)?.[1] ?? '');
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? 0);
  const sockErr = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  const errors = non2xx + (sockErr ? sockErr.slice(1).reduce((a, b) => a + Number(b), 0) : 0);
  return {
    rps,
    p50Ms: p50,
    p99Ms: p99,
    cpuMsPerReq: o.pid && total ? (cpu1 - cpu0) / total : null,
    ...(o.otherPids && total ? { otherCpuMsPerReq: otherMs / total } : {}),
    errors,
  };
}

export const median = (xs: number[]): number => {
  const s = [...xs].filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

export interface Case {
  name: string;
  baseline: LoadOptions;
  subject: LoadOptions;
}

export interface CaseResult {
  name: string;
  baseline: LoadResult;
  subject: LoadResult;
  ratio: number;
  addedP50Ms: number;
}

function medianResult(rs: LoadResult[]): LoadResult {
  return {
    rps: median(rs.map((r) => r.rps)),
    p50Ms: median(rs.map((r) => r.p50Ms)),
    p99Ms: median(rs.map((r) => r.p99Ms)),
    cpuMsPerReq: rs[0]?.cpuMsPerReq == null ? null : median(rs.map((r) => r.cpuMsPerReq ?? NaN)),
    ...(rs[0]?.otherCpuMsPerReq === undefined
      ? {}
      : { otherCpuMsPerReq: median(rs.map((r) => r.otherCpuMsPerReq ?? NaN)) }),
    errors: rs.reduce((a, r) => a + r.errors, 0),
  };
}

/**
 * Runs each case's baseline and subject alternately for `rounds` rounds (the machine is
 * noisy; interleaving keeps both under the same conditions), then prints medians and ratios.
 */
export async function compare(title: string, cases: Case[], rounds = 3): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  for (const c of cases) {
    const b: LoadResult[] = [];
    const s: LoadResult[] = [];
    // Warm up both (JIT, connection pools) before anything counts.
    if (!SMOKE) {
      await load({ ...c.baseline, seconds: 2 });
      await load({ ...c.subject, seconds: 2 });
    }
    for (let i = 0; i < (SMOKE ? 1 : rounds); i++) {
      b.push(await load(c.baseline));
      s.push(await load(c.subject));
    }
    const baseline = medianResult(b);
    const subject = medianResult(s);
    record(`${title} :: ${c.name}`, subject.rps / baseline.rps, {
      baseline: baseline.rps,
      subject: subject.rps,
      cpu: [baseline.cpuMsPerReq, subject.cpuMsPerReq],
    });
    results.push({
      name: c.name,
      baseline,
      subject,
      ratio: subject.rps / baseline.rps,
      addedP50Ms: subject.p50Ms - baseline.p50Ms,
    });
  }
  printResults(title, results);
  return results;
}

const f = (n: number | null, d = 2) => (n == null || !Number.isFinite(n) ? '-' : n.toFixed(d));

export function printResults(title: string, results: CaseResult[]): void {
  console.log(`\n## ${title}\n`);
  console.log(
    '| case | baseline req/s | plinth req/s | ratio | p50 ms (base / plinth) | p99 ms (base / plinth) | CPU ms/req (base / plinth) | errors |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    console.log(
      `| ${r.name} | ${f(r.baseline.rps, 0)} | ${f(r.subject.rps, 0)} | **${f(r.ratio)}×** | ${f(r.baseline.p50Ms)} / ${f(r.subject.p50Ms)} | ${f(r.baseline.p99Ms)} / ${f(r.subject.p99Ms)} | ${f(r.baseline.cpuMsPerReq, 3)} / ${f(r.subject.cpuMsPerReq, 3)} | ${r.baseline.errors + r.subject.errors} |`,
    );
  }
}

export interface Server {
  proc: ChildProcess;
  pid: number;
  url: string;
  stop(): Promise<void>;
}

/** Spawns a server process and waits until `readyPath` answers 200. */
export async function spawnServer(
  cmd: string,
  args: string[],
  opts: {
    env?: Record<string, string | undefined>;
    port: number;
    readyPath?: string;
    timeoutMs?: number;
    cwd?: string;
    cpu?: number;
  },
): Promise<Server & { readyMs: number }> {
  const started = performance.now();
  const proc = spawn(...pinned(opts.cpu, cmd, args), {
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'ignore', 'pipe'],
    cwd: opts.cwd,
  });
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += d));
  const url = `http://127.0.0.1:${opts.port}`;
  // Generous: a fresh data dir on a loaded shared machine can take a minute or more.
  const deadline = Date.now() + Math.max(opts.timeoutMs ?? 0, 180_000);
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${cmd} exited early: ${stderr.slice(-2000)}`);
    try {
      const r = await fetch(url + (opts.readyPath ?? '/'));
      if (r.ok) break;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`${cmd} did not become ready: ${stderr.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  const readyMs = performance.now() - started;
  return {
    proc,
    pid: proc.pid!,
    url,
    readyMs,
    // Settles however the process ended: a process killed by a signal has no exit code, and
    // waiting for an 'exit' that already happened left the benchmark's top-level await
    // unsettled (Node then exits with code 13).
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
        setTimeout(() => proc.kill('SIGKILL'), 10_000).unref();
      }),
  };
}

/** A free TCP port on loopback. */
export async function freePort(): Promise<number> {
  const net = await import('node:net');
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** The command that runs Plinth the way `npm start` does, without npm in between (`npm run bench` builds dist/ first). */
export const PLINTH = { cmd: process.execPath, args: [process.env.BENCH_PLINTH_MAIN ?? 'dist/main.js'] };

/** Plinth run from its TypeScript source through the tsx loader (`npm run dev`). */
export const PLINTH_SOURCE = { cmd: process.execPath, args: ['--import', 'tsx', 'src/main.ts'] };

/** The pids of a process and all its descendants (from /proc). */
export function processTree(root: number): number[] {
  const parent = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* gone */
    }
  }
  const out = [root];
  for (let i = 0; i < out.length; i++) for (const [pid, pp] of parent) if (pp === out[i]) out.push(pid);
  return out;
}

/**
 * Memory of a process tree (Plinth and the postgres it runs) in MiB: the sum of RSS (counts
 * postgres' shared buffers once per process that touched them) and of PSS (shared pages
 * split between the processes: the honest total).
 */
export function treeMemoryMiB(root: number): { rss: number; pss: number; processes: number } {
  let rss = 0;
  let pss = 0;
  const pids = processTree(root);
  for (const pid of pids) {
    try {
      const s = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      rss += Number(/^Rss:\s+(\d+) kB/m.exec(s)?.[1] ?? 0) / 1024;
      pss += Number(/^Pss:\s+(\d+) kB/m.exec(s)?.[1] ?? 0) / 1024;
    } catch {
      /* gone */
    }
  }
  return { rss, pss, processes: pids.length };
}

/**
 * A temp dir for a benchmark's data, enterable by others (0711): as root the embedded Postgres
 * runs as an unprivileged user, which must reach a DATA_DIR made inside it.
 */
export function benchDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  chmodSync(dir, 0o711);
  return dir;
}

/** The server Postgres benchmarks compare against: BENCH_DATABASE_URL, else TEST_DATABASE_URL, else the local one. */
export const SERVER_PG_URL =
  process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A fresh database on a server Postgres for one benchmark run; `drop()` removes it again. */
export async function freshBenchDatabase(
  adminUrl: string = SERVER_PG_URL,
): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `plinth_bench_${Date.now().toString(36)}_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    drop: async () => {
      await admin.query(`drop database if exists ${name} with (force)`);
      // The database's roles are cluster-wide (src/db/owner.ts): they go with it.
      for (const role of databaseRoles(name)) await admin.query(`drop role if exists ${role}`);
      await admin.end();
    },
  };
}
