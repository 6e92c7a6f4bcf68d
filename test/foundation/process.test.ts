// Plinth as a real process: `npm start`'s command, config errors, graceful shutdown,
// credentials that survive a restart, and the key CLI.
import { spawn, execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alive } from '../../src/lib/process.js';
import { openDatabase } from '../../src/db/open.js';
import { loadCredentials } from '../../src/auth/credentials.js';
import { builtServer, builtServerEnv } from '../helpers/build.js';
import { at, call } from '../helpers/http.js';
import { freePort } from '../helpers/port.js';

const run = promisify(execFile);
// `npm start` runs the compiled JavaScript (`node dist/main.js`, built by `npm install`):
// these tests run the run's build of the current source (helpers/build.ts) with plain Node,
// no TypeScript loader.
let BUILD_DIR = '';
beforeAll(async () => {
  BUILD_DIR = await builtServer();
}, 300_000);
function startServer(env: Record<string, string>) {
  const proc = spawn(process.execPath, [`${BUILD_DIR}/main.js`], {
    env: builtServerEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return { proc, output: () => out, exited };
}

async function waitHealthy(port: number, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await call(at(`http://127.0.0.1:${port}`), 'GET', '/api/health')).status === 200) return;
    } catch {
      /* starting */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('server did not become healthy');
}

describe('the server process', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'plinth-proc-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('refuses to start on bad config with one message listing every problem', async () => {
    const s = startServer({ DATA_DIR: dataDir, PORT: 'seventy', RATE_LIMIT_PLAN: 'gold', JWT_SECRET: 'short' });
    expect(await s.exited).toBe(1);
    const out = s.output();
    expect(out).toContain('Invalid configuration');
    expect(out).toMatch(/PORT/);
    expect(out).toMatch(/RATE_LIMIT_PLAN/);
    expect(out).toMatch(/JWT_SECRET/);
  });

  it('a cluster that cannot start (DATA_DIR/postgres holds none): one line saying why, exit 1', async () => {
    // main.ts launches postgres before loading the rest of the server; its failure is the
    // start's one line, not an unhandled rejection while the code loads.
    const dir = mkdtempSync(path.join(tmpdir(), 'plinth-proc-bad-'));
    try {
      mkdirSync(path.join(dir, 'postgres'));
      const s = startServer({ DATA_DIR: dir, PORT: String(await freePort()) });
      expect(await s.exited).toBe(1);
      expect(s.output()).toMatch(/^Plinth failed to start: .*postgres exists but holds no Postgres cluster/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a port in use: one line saying what to do, exit 1, and the launched postgres stopped', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'plinth-proc-port-'));
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const s = startServer({ DATA_DIR: dir, PORT: String(port), HOST: '127.0.0.1' });
      expect(await s.exited).toBe(1);
      expect(s.output()).toMatch(
        new RegExp(
          `^Plinth failed to start: port ${port} on 127\\.0\\.0\\.1 is already in use .*set PORT to a free port\\.$`,
          'm',
        ),
      );
      // The embedded postgres main.ts launched gets its fast shutdown as Plinth exits.
      const pidFile = path.join(dir, 'postgres', 'postmaster.pid');
      const deadline = Date.now() + 15_000;
      while (existsSync(pidFile) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(existsSync(pidFile)).toBe(false);
    } finally {
      taken.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('prints the admin key once, keeps the keys across a restart, and drains in-flight requests on SIGTERM', async () => {
    const port = await freePort();
    const env = { DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' };
    const first = startServer(env);
    await waitHealthy(port);
    const adminKey = /\b(ik_[0-9a-f]{64})\b/.exec(first.output())?.[1];
    expect(adminKey).toBeDefined();
    // The admin key never reaches a log line.
    const logLines = first
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'));
    expect(logLines.join('\n')).not.toContain(adminKey!);

    // A request whose body is still arriving when SIGTERM comes must still be answered.
    const answer = new Promise<string>((resolve, reject) => {
      const sock = net.connect(port, '127.0.0.1', () => {
        sock.write(
          `POST /api/nope HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 13\r\nConnection: close\r\n\r\n{"a":`,
        );
        setTimeout(() => first.proc.kill('SIGTERM'), 200);
        setTimeout(() => sock.write('"later"}'), 700);
      });
      let data = '';
      sock.on('data', (d) => (data += d));
      sock.on('end', () => resolve(data));
      sock.on('error', reject);
    });
    expect(await answer).toMatch(/^HTTP\/1\.1 404/);
    expect(await first.exited).toBe(0);
    expect(first.output()).toContain('shutting down');

    const second = startServer(env);
    await waitHealthy(port);
    expect(second.output()).not.toMatch(/ik_[0-9a-f]{64}/);
    const r = await call(at(`http://127.0.0.1:${port}`), 'GET', '/api/health?checks=true', {
      headers: { 'x-api-key': adminKey! },
    });
    expect(r.status).toBe(200);
    // The embedded Postgres under DATA_DIR/postgres: stopped with Plinth, nothing left behind.
    const pidFile = path.join(dataDir, 'postgres', 'postmaster.pid');
    const postmaster = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
    expect(alive(postmaster)).toBe(true);
    second.proc.kill('SIGINT');
    expect(await second.exited).toBe(0);
    expect(alive(postmaster)).toBe(false);
    expect(existsSync(pidFile)).toBe(false);
    // Two full starts of a real server: on a loaded 2-core machine each can take tens of seconds.
  }, 180_000);

  it('after Plinth itself is killed (SIGKILL), the next start stops the orphaned postgres and takes over', async () => {
    const port = await freePort();
    const env = { DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' };
    const first = startServer(env);
    await waitHealthy(port);
    const pidFile = path.join(dataDir, 'postgres', 'postmaster.pid');
    const orphan = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
    first.proc.kill('SIGKILL');
    await first.exited;
    expect(alive(orphan)).toBe(true); // postgres runs in its own process group: it outlives a SIGKILL
    const second = startServer(env);
    await waitHealthy(port);
    expect(alive(orphan)).toBe(false);
    const r = await call(at(`http://127.0.0.1:${port}`), 'GET', '/api/health?checks=true');
    expect(r.body.checks.database).toEqual({ status: 'ok', engine: 'embedded' });
    second.proc.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 120_000);

  it('the CLI shows the anon key and rotates the admin key', async () => {
    const env = builtServerEnv({ DATA_DIR: dataDir });
    const shown = await run(process.execPath, [`${BUILD_DIR}/cli.js`, 'keys', 'show'], { env });
    expect(shown.stdout).toMatch(/anon key: anon_[0-9a-f]{64}/);
    const rotated = await run(process.execPath, [`${BUILD_DIR}/cli.js`, 'keys', 'rotate-admin'], { env });
    const newKey = /(ik_[0-9a-f]{64})/.exec(rotated.stdout)?.[1];
    expect(newKey).toBeDefined();

    const { db } = await openDatabase({ dataDir, databaseUrl: null });
    try {
      const { credentials } = await loadCredentials(db, { adminApiKey: null, anonKey: null, jwtSecret: null });
      expect(credentials.isAdminKey(newKey!)).toBe(true);
      expect(credentials.isAnonKey(/anon key: (\S+)/.exec(shown.stdout)![1]!)).toBe(true);
    } finally {
      await db.close();
    }
  });
});
