// MFA benchmark: what a TOTP sign-in (password step answering a challenge, then the
// challenge with a code) costs against a plain password sign-in, on the same server in the
// same run. Sequential (one request at a time), interleaved, a few dozen of each: the codes
// are single use, so every MFA sign-in needs its own user (set up first, not measured).
// Runs on the embedded Postgres, or on a server Postgres when DATABASE_URL is set.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generateSync } from 'otplib';
import { PLINTH, cpuMs, freePort, median, smoke, spawnServer } from './lib.js';

const USERS = Number(process.env.BENCH_MFA_USERS ?? smoke(60, 5));

async function post(url: string, body: unknown, token?: string): Promise<any> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const r = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  const json = await r.json();
  if (!r.ok) throw new Error(`${url}: ${r.status} ${JSON.stringify(json)}`);
  return json;
}

/** Wall and server CPU time of one call, in ms. */
async function timed(pid: number, f: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> {
  const c0 = cpuMs(pid);
  const t0 = performance.now();
  await f();
  return { wall: performance.now() - t0, cpu: cpuMs(pid) - c0 };
}

export async function benchMfa(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'plinth-bench-mfa-'));
  const port = await freePort();
  const plinth = await spawnServer(PLINTH.cmd, PLINTH.args, {
    env: { DATA_DIR: dataDir, LOG_LEVEL: 'warn', RATE_LIMIT_PLAN: 'off', PORT: String(port), HOST: '127.0.0.1' },
    port,
    readyPath: '/api/health',
    timeoutMs: 120_000,
  });
  const api = (p: string) => `${plinth.url}${p}`;
  try {
    const password = 'bench-password-1';
    const plain = `bench-plain-${Date.now().toString(36)}@example.com`;
    await post(api('/api/auth/signup'), { email: plain, password });
    // Users with an active factor; the verification used the code of this time step, each
    // MFA sign-in below uses the next step's code (inside the ±1 window).
    const base = Math.floor(Date.now() / 30_000) * 30 + 1;
    const mfaUsers: { email: string; secret: string; factorId: string }[] = [];
    for (let i = 0; i < USERS; i++) {
      const email = `bench-mfa-${i}-${Date.now().toString(36)}@example.com`;
      const up = await post(api('/api/auth/signup'), { email, password });
      const f = await post(api('/api/auth/mfa/factors'), {}, up.accessToken);
      await post(
        api(`/api/auth/mfa/factors/${f.id}/verify`),
        { code: generateSync({ secret: f.secret, epoch: base }) },
        up.accessToken,
      );
      mfaUsers.push({ email, secret: f.secret, factorId: f.id });
    }
    const pw: { wall: number; cpu: number }[] = [];
    const first: { wall: number; cpu: number }[] = [];
    const second: { wall: number; cpu: number }[] = [];
    for (const u of mfaUsers) {
      pw.push(await timed(plinth.pid, () => post(api('/api/auth/signin'), { email: plain, password })));
      let challenge: any;
      first.push(
        await timed(
          plinth.pid,
          async () => (challenge = await post(api('/api/auth/signin'), { email: u.email, password })),
        ),
      );
      const code = generateSync({ secret: u.secret, epoch: base + 30 });
      second.push(
        await timed(plinth.pid, () =>
          post(api('/api/auth/mfa/challenge'), { token: challenge.challenge.token, factorId: u.factorId, code }),
        ),
      );
    }
    // Wall: medians. CPU: means (the kernel counts CPU in 10 ms ticks, so one request reads as
    // 0 or 10 ms; the mean over many is right, a median is not).
    const m = (xs: { wall: number; cpu: number }[], k: 'wall' | 'cpu') =>
      k === 'wall' ? median(xs.map((x) => x.wall)) : xs.reduce((a, x) => a + x.cpu, 0) / xs.length;
    const total = { wall: m(first, 'wall') + m(second, 'wall'), cpu: m(first, 'cpu') + m(second, 'cpu') };
    console.log(
      `MFA sign-in vs password sign-in (${process.env.DATABASE_URL ? 'server Postgres' : 'embedded Postgres'}, ${USERS} of each, sequential; wall: medians, server CPU: means)`,
    );
    console.log(`- password sign-in: ${m(pw, 'wall').toFixed(1)} ms wall, ${m(pw, 'cpu').toFixed(1)} ms server CPU`);
    console.log(
      `- MFA step 1 (password, answers a challenge): ${m(first, 'wall').toFixed(1)} ms wall, ${m(first, 'cpu').toFixed(1)} ms CPU`,
    );
    console.log(
      `- MFA step 2 (POST /api/auth/mfa/challenge, TOTP check, session): ${m(second, 'wall').toFixed(1)} ms wall, ${m(second, 'cpu').toFixed(1)} ms CPU`,
    );
    console.log(
      `- MFA sign-in, both steps: ${total.wall.toFixed(1)} ms wall (${(total.wall / m(pw, 'wall')).toFixed(2)}× password), ${total.cpu.toFixed(1)} ms CPU (${(total.cpu / m(pw, 'cpu')).toFixed(2)}×)`,
    );
  } finally {
    await plinth.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchMfa();
