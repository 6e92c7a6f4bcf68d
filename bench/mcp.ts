// MCP: a tool call's added latency over the same operation's HTTP route (run-raw-sql vs POST
// /api/database/advance/rawsql, both "select 1", both by plain fetch so the client costs the
// same), tools/list, and the server's memory per open MCP session. In-process server on the
// server Postgres (TEST_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres).
// Sequential requests (one at a time): latency, not throughput. Goals: p50 added ≤ 2 ms,
// tools/list ≤ 5 ms. BENCH_SMOKE=1: 20 calls and 10 sessions.
process.env.TEST_DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/postgres';
const { startApp } = await import('../test/helpers/app.js');
const { smoke } = await import('./lib.js');

const N = Number(process.env.BENCH_N ?? smoke(400, 20));
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? smoke(200, 10));
const t = await startApp('postgres');
const auth = {
  authorization: `Bearer ${t.adminKey}`,
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

async function rpc(body: unknown, session?: string): Promise<Response> {
  return fetch(`${t.url}/api/mcp`, {
    method: 'POST',
    headers: session ? { ...auth, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' } : auth,
    body: JSON.stringify(body),
  });
}

async function openSession(): Promise<string> {
  const r = await rpc({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
  });
  const id = r.headers.get('mcp-session-id')!;
  await r.text();
  await (await rpc({ jsonrpc: '2.0', method: 'notifications/initialized' }, id)).text();
  return id;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.99)]!;
async function time(fn: () => Promise<void>): Promise<number> {
  const s = performance.now();
  await fn();
  return performance.now() - s;
}

try {
  const session = await openSession();
  const viaHttp = () =>
    fetch(`${t.url}/api/database/advance/rawsql`, {
      method: 'POST',
      headers: { 'x-api-key': t.adminKey, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'select 1 as one' }),
    }).then((r) => void r.text());
  const viaTool = () =>
    rpc(
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'run-raw-sql', arguments: { query: 'select 1 as one' } },
      },
      session,
    ).then((r) => void r.text());
  const list = () => rpc({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, session).then((r) => void r.text());
  for (let i = 0; i < smoke(50, 5); i++) await Promise.all([viaHttp(), viaTool(), list()]);
  const h: number[] = [];
  const m: number[] = [];
  const l: number[] = [];
  // Interleaved, so both see the same machine load.
  for (let i = 0; i < N; i++) {
    h.push(await time(viaHttp));
    m.push(await time(viaTool));
    l.push(await time(list));
  }
  console.log(
    `HTTP route  POST /api/database/advance/rawsql  p50 ${median(h).toFixed(2)} ms  p99 ${p99(h).toFixed(2)} ms`,
  );
  console.log(
    `MCP tool    run-raw-sql                        p50 ${median(m).toFixed(2)} ms  p99 ${p99(m).toFixed(2)} ms`,
  );
  console.log(`added by MCP: p50 ${(median(m) - median(h)).toFixed(2)} ms (goal ≤ 2 ms)`);
  console.log(`tools/list  p50 ${median(l).toFixed(2)} ms  p99 ${p99(l).toFixed(2)} ms (goal ≤ 5 ms)`);

  const gc = (globalThis as { gc?: () => void }).gc;
  const heap = () => {
    gc?.();
    gc?.();
    return process.memoryUsage().heapUsed;
  };
  const before = heap();
  for (let i = 0; i < SESSIONS; i++) await openSession();
  const after = heap();
  console.log(
    `memory per open session: ${((after - before) / SESSIONS / 1024).toFixed(1)} KiB of heap (${SESSIONS} sessions${gc ? '' : '; run with --expose-gc for exact numbers'})`,
  );
} finally {
  await t.close();
}
