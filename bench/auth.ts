// Auth benchmark: sign-in (argon2id check + session insert) and token-verified
// GET /api/auth/user (JWT check + session row look-up + user read), each as a ratio to
// GET /api/health on the same server in the same run, interleaved rounds. Runs on PGlite, or
// on a server Postgres when DATABASE_URL is set in the environment.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PLINTH, compare, freePort, requireWrk, spawnServer } from './lib.js';

export async function benchAuth(): Promise<void> {
  await requireWrk();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'plinth-bench-auth-'));
  const port = await freePort();
  const plinth = await spawnServer(PLINTH.cmd, PLINTH.args, {
    env: { DATA_DIR: dataDir, LOG_LEVEL: 'warn', RATE_LIMIT_PLAN: 'off', PORT: String(port), HOST: '127.0.0.1' },
    port,
    readyPath: '/api/health',
    timeoutMs: 120_000,
  });
  try {
    const credentials = { email: `bench-${Date.now().toString(36)}@example.com`, password: 'bench-password-1' };
    const signup = await fetch(`${plinth.url}/api/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...credentials, name: 'Bench' }),
    });
    if (!signup.ok) throw new Error(`signup failed: ${signup.status} ${await signup.text()}`);
    const { accessToken } = (await signup.json()) as { accessToken: string };
    const health = { url: `${plinth.url}/api/health`, pid: plinth.pid, seconds: 5, connections: 16 };
    const results = await compare(
      `Auth vs GET /api/health on the same server (${process.env.DATABASE_URL ? 'server Postgres' : 'PGlite'})`,
      [
        {
          name: 'POST /api/auth/signin',
          baseline: health,
          subject: {
            url: `${plinth.url}/api/auth/signin`,
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(credentials),
            pid: plinth.pid,
            seconds: 5,
            connections: 16,
          },
        },
        {
          name: 'GET /api/auth/user (token + session check)',
          baseline: health,
          subject: {
            url: `${plinth.url}/api/auth/user`,
            headers: { authorization: `Bearer ${accessToken}` },
            pid: plinth.pid,
            seconds: 5,
            connections: 16,
          },
        },
      ],
    );
    for (const r of results) {
      console.log(
        `- ${r.name}: ${r.subject.rps.toFixed(0)} req/s = ${r.ratio.toFixed(4)}× health (${r.baseline.rps.toFixed(0)} req/s)`,
      );
    }
  } finally {
    await plinth.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchAuth();
