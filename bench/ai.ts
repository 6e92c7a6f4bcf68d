// AI gateway overhead: chat completions through Plinth (user token, usage recorded) against
// calling the same local OpenAI-protocol upstream directly, interleaved in one run.
// Goal: added p50 latency ≤ 2 ms. The upstream is test/helpers/openai-mock.ts (fixed answer).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PLINTH, compare, freePort, requireWrk, spawnServer, type Server } from './lib.js';

const BODY = JSON.stringify({
  model: 'bench-model',
  messages: [{ role: 'user', content: 'Say hello in five words.' }],
  max_tokens: 16,
  temperature: 0,
});
const ADMIN_KEY = `ik_${'b'.repeat(64)}`;
const STREAM_BODY = JSON.stringify({ ...JSON.parse(BODY), stream: true });

async function signUp(base: string): Promise<string> {
  const res = await fetch(`${base}/api/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `bench-${Date.now()}@example.com`, password: 'bench-password-123', name: 'Bench' }),
  });
  const body = (await res.json()) as { accessToken?: string };
  if (!res.ok || !body.accessToken) throw new Error(`signup failed: ${res.status} ${JSON.stringify(body)}`);
  return body.accessToken;
}

export async function benchAi(): Promise<void> {
  await requireWrk();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'plinth-bench-ai-'));
  const servers: Server[] = [];
  try {
    const upstreamPort = await freePort();
    const upstream = await spawnServer(
      process.execPath,
      ['--import', 'tsx', 'test/helpers/openai-mock.ts', String(upstreamPort)],
      {
        port: upstreamPort,
        readyPath: '/v1/models',
      },
    );
    servers.push(upstream);
    const port = await freePort();
    const plinth = await spawnServer(PLINTH.cmd, PLINTH.args, {
      env: {
        DATA_DIR: dataDir,
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        RATE_LIMIT_PLAN: 'off',
        ADMIN_API_KEY: ADMIN_KEY,
        AI_BASE_URL: `${upstream.url}/v1`,
        AI_API_KEY: 'sk-bench',
      },
      port,
      readyPath: '/api/health',
    });
    servers.push(plinth);
    const token = await signUp(plinth.url);
    const json = { 'content-type': 'application/json' };
    const direct = (body: string, connections: number) => ({
      url: `${upstream.url}/v1/chat/completions`,
      method: 'POST',
      headers: { ...json, authorization: 'Bearer sk-bench' },
      body,
      pid: upstream.pid,
      seconds: 4,
      connections,
    });
    const through = (body: string, connections: number, credential = `Bearer ${token}`) => ({
      url: `${plinth.url}/api/ai/chat/completions`,
      method: 'POST',
      headers: { ...json, authorization: credential },
      body,
      pid: plinth.pid,
      seconds: 4,
      connections,
    });
    // One call first, so a broken setup stops here instead of showing up as wrk errors
    // (compare() warms both paths up itself).
    const r = await fetch(`${plinth.url}/api/ai/chat/completions`, {
      method: 'POST',
      headers: { ...json, authorization: `Bearer ${token}` },
      body: BODY,
    });
    if (r.status !== 200) throw new Error(`first call failed: ${r.status} ${await r.text()}`);
    await r.arrayBuffer();
    const results = await compare(
      'POST /api/ai/chat/completions: direct to the upstream vs through Plinth (goal: added p50 ≤ 2 ms)',
      [
        { name: 'chat, user token, 1 connection (latency)', baseline: direct(BODY, 1), subject: through(BODY, 1) },
        // The admin key needs no session lookup: the difference to the line above is identity, not the gateway.
        {
          name: 'chat, admin key, 1 connection',
          baseline: direct(BODY, 1),
          subject: through(BODY, 1, `Bearer ${ADMIN_KEY}`),
        },
        { name: 'chat, 16 connections (throughput)', baseline: direct(BODY, 16), subject: through(BODY, 16) },
        { name: 'chat stream: true, 1 connection', baseline: direct(STREAM_BODY, 1), subject: through(STREAM_BODY, 1) },
      ],
    );
    console.log('');
    for (const r of results)
      console.log(`- ${r.name}: added p50 ${r.addedP50Ms.toFixed(2)} ms, req/s ratio ${r.ratio.toFixed(2)}×`);
    console.log(
      '\nCPU ms/req: baseline column is the upstream process, plinth column is Plinth alone (its added work).',
    );
  } finally {
    for (const s of servers.reverse()) await s.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchAi();
