// Automation (issue 28), short runs on a server Postgres (BENCH_DATABASE_URL / TEST_DATABASE_URL):
// (a) schedule accuracy: delay from a 1-second schedule's due time to the receiver, p50/p99, on
//     one and on three instances (goal p99 < 1 s);
// (b) webhooks: throughput and commit-to-receipt latency against a bare pg LISTEN + fetch relay
//     in the same run (goal ≥ 0.5× its throughput; p99 < 500 ms at 200 changes/s);
// (c) the cost a hook adds to a plain single-row insert (goal ≤ 15%): in SQL (the strictest
//     view: nothing else in the request) and through the records API (what an app does).
// Sizes: BENCH_AUTO_SECONDS (8), BENCH_AUTO_BURST (1000); BENCH_SMOKE=1 runs every step small
// (2 s of schedules, bursts of 100, 2 rounds of 50 inserts).
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freshBenchDatabase, smoke } from './lib.js';
import { loadConfig } from '../src/config/index.js';
import { buildDeps, type Deps } from '../src/deps.js';
import { buildApp } from '../src/app.js';
import { ownerRoleName } from '../src/db/owner.js';
import { openPostgres } from '../src/db/postgres.js';
import { newAdminKey } from '../src/auth/credentials.js';

const SECONDS = Number(process.env.BENCH_AUTO_SECONDS ?? smoke(8, 2));
const BURST = Number(process.env.BENCH_AUTO_BURST ?? smoke(1000, 100));
/** Rounds of single-row inserts for the cost of a hook, and inserts per table a round. */
const COST_ROUNDS = smoke(6, 2);
const COST_INSERTS = smoke(300, 50);
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const received: Array<{ at: number; headers: Record<string, unknown>; body: string }> = [];
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    received.push({ at: Date.now(), headers: req.headers, body });
    res.end('ok');
  });
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const port = (server.address() as { port: number }).port;
const hookUrl = `http://127.0.0.1:${port}/hook`;

const bench = await freshBenchDatabase();
const dataDir = mkdtempSync(path.join(tmpdir(), 'plinth-bench-auto-'));
const adminKey = newAdminKey();
const env = {
  DATA_DIR: dataDir,
  LOG_LEVEL: 'silent',
  ADMIN_API_KEY: adminKey,
  PORT: '0',
  OUTBOUND_ALLOW_HOSTS: `127.0.0.1:${port}`,
  RATE_LIMIT_PLAN: 'off',
};
const instance = async (): Promise<Deps> =>
  buildDeps(loadConfig(env), { db: await openPostgres(bench.url, { max: 10 }) });

async function accuracy(instances: Deps[]): Promise<string> {
  received.length = 0;
  const s = await instances[0]!.schedules.create({
    name: 'acc',
    cronSchedule: '1 seconds',
    functionUrl: `${hookUrl}?acc`,
  });
  await sleep(SECONDS * 1000);
  await instances[0]!.schedules.update(s.id, { enabled: false });
  await sleep(500);
  const delays = received
    .filter((r) => r.headers['x-plinth-due-at'])
    .map((r) => r.at - Date.parse(String(r.headers['x-plinth-due-at'])));
  await instances[0]!.schedules.remove(s.id);
  return `${delays.length} runs, delay p50 ${pct(delays, 50)} ms, p99 ${pct(delays, 99)} ms`;
}

/** Inserts `n` rows at `rate` per second (0: as fast as 8 connections go); answers the insert times. */
async function insert(db: pg.Pool, table: string, n: number, rate: number): Promise<number[]> {
  const times: number[] = [];
  const start = Date.now();
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      if (rate) await sleep(Math.max(0, start + (i * 1000) / rate - Date.now()));
      const t0 = performance.now();
      await db.query(`insert into public.${table} (n, sent_at) values ($1, clock_timestamp())`, [i]);
      times.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return times;
}

async function waitFor(n: number, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (received.length < n && Date.now() < end) await sleep(20);
}

const latencies = () => received.map((r) => r.at - Date.parse(JSON.parse(r.body).record.sent_at));

try {
  const one = await instance();
  console.log(`schedule accuracy, 1 instance:  ${await accuracy([one])}`);
  const more = [await instance(), await instance()];
  console.log(`schedule accuracy, 3 instances: ${await accuracy([one, ...more])}`);
  for (const d of more) await d.close();

  const pool = new pg.Pool({ connectionString: bench.url, max: 8 });
  pool.on('error', () => {}); // the benchmark's database is dropped with its connections at the end
  for (const t of ['hooked', 'plain', 'relayed'])
    await pool.query(`create table public.${t} (id bigserial primary key, n int, sent_at timestamptz)`);
  // The baseline relay: a trigger NOTIFYs the row; one LISTEN connection POSTs each to the receiver.
  await pool.query(`create function public.relay() returns trigger language plpgsql as $$ begin
      perform pg_notify('bench_relay', json_build_object('type', tg_op, 'table', tg_table_name, 'record', row_to_json(new))::text); return null; end $$`);
  await pool.query(`create trigger relay after insert on public.relayed for each row execute function public.relay()`);
  const listener = new pg.Client({ connectionString: bench.url });
  await listener.connect();
  listener.on('error', () => {});
  listener.on('notification', (m) => void fetch(hookUrl, { method: 'POST', body: m.payload }).catch(() => {}));
  await listener.query('listen bench_relay');
  await one.webhooks.create({ name: 'bench', table: 'hooked', events: ['INSERT'], url: hookUrl });

  const burst = async (table: string) => {
    received.length = 0;
    const t0 = Date.now();
    await insert(pool, table, BURST, 0);
    await waitFor(BURST);
    return { perSecond: Math.round((received.length * 1000) / (Date.now() - t0)), p99: pct(latencies(), 99) };
  };
  const base = await burst('relayed');
  const ours = await burst('hooked');
  console.log(
    `webhook burst of ${BURST}: Plinth ${ours.perSecond}/s vs bare LISTEN+fetch ${base.perSecond}/s (${(ours.perSecond / base.perSecond).toFixed(2)}×)`,
  );
  for (const [name, table] of [
    ['Plinth', 'hooked'],
    ['bare relay', 'relayed'],
  ] as const) {
    received.length = 0;
    await insert(pool, table, 200 * Math.min(SECONDS, 5), 200);
    await waitFor(200 * Math.min(SECONDS, 5));
    const l = latencies();
    console.log(
      `webhook latency at 200 changes/s, ${name}: ${l.length} received, p50 ${pct(l, 50)} ms, p99 ${pct(l, 99)} ms`,
    );
  }
  // Insert cost, relay off (its work is not the insert's): hooked vs plain in alternating
  // rounds, the median single-row insert of each (the shared machine's noise is large), and
  // the trigger's own time inside the server (EXPLAIN ANALYZE).
  await one.webhooks.stop();
  const cost: Record<string, number[]> = { plain: [], hooked: [] };
  for (let round = 0; round < COST_ROUNDS; round++) {
    for (const t of (round % 2 ? ['hooked', 'plain'] : ['plain', 'hooked']) as Array<'plain' | 'hooked'>)
      cost[t]!.push(...(await insert(pool, t, COST_INSERTS, 0)));
  }
  const p50 = (xs: number[]) => pct(xs, 50);
  console.log(
    `insert cost (8 writers, median): plain ${p50(cost.plain!).toFixed(3)} ms, hooked ${p50(cost.hooked!).toFixed(3)} ms (${((p50(cost.hooked!) / p50(cost.plain!) - 1) * 100).toFixed(1)}%)`,
  );
  const plan = async (t: string) => {
    const rows = (
      await pool.query(`explain (analyze, format json) insert into public.${t} (n, sent_at) values (1, now())`)
    ).rows[0]['QUERY PLAN'][0];
    return rows['Execution Time'] as number;
  };
  const inServer = { plain: [] as number[], hooked: [] as number[] };
  const plans = smoke(50, 5);
  for (let i = 0; i < plans; i++) for (const t of ['plain', 'hooked'] as const) inServer[t].push(await plan(t));
  console.log(
    `insert in the server (median of ${plans}): plain ${p50(inServer.plain).toFixed(3)} ms, hooked ${p50(inServer.hooked).toFixed(3)} ms (trigger + outbox row)`,
  );
  // The same insert as an app makes it: POST /api/database/records/<table> over HTTP, 8 writers.
  // Tables an app makes through Plinth belong to its owner role, which the records API uses.
  const owner = ownerRoleName(new URL(bench.url).pathname.slice(1));
  for (const t of ['hooked', 'plain']) await pool.query(`alter table public.${t} owner to ${owner}`);
  const app = await buildApp(one, { logStream: false });
  const origin = await app.listen({ port: 0, host: '127.0.0.1' });
  const viaApi = async (table: string, n: number): Promise<number[]> => {
    const times: number[] = [];
    let next = 0;
    const worker = async () => {
      while (next++ < n) {
        const t0 = performance.now();
        const r = await fetch(`${origin}/api/database/records/${table}`, {
          method: 'POST',
          headers: { 'x-api-key': adminKey, 'content-type': 'application/json', prefer: 'return=minimal' },
          body: JSON.stringify([{ n: next, sent_at: new Date().toISOString() }]),
        });
        const answer = await r.text();
        if (r.status >= 300) throw new Error(`records insert answered ${r.status}: ${answer}`);
        times.push(performance.now() - t0);
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    return times;
  };
  const api: Record<string, number[]> = { plain: [], hooked: [] };
  for (let round = 0; round < COST_ROUNDS; round++) {
    for (const t of (round % 2 ? ['hooked', 'plain'] : ['plain', 'hooked']) as Array<'plain' | 'hooked'>)
      api[t]!.push(...(await viaApi(t, COST_INSERTS)));
  }
  console.log(
    `insert cost through the records API (8 writers, median): plain ${p50(api.plain!).toFixed(3)} ms, hooked ${p50(api.hooked!).toFixed(3)} ms (${((p50(api.hooked!) / p50(api.plain!) - 1) * 100).toFixed(1)}%)`,
  );
  await app.close();
  await listener.end();
  await pool.end();
  await one.close();
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  server.close();
  await bench.drop();
  rmSync(dataDir, { recursive: true, force: true });
}
