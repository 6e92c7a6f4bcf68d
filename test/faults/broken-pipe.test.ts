// The reader of Plinth's stdout goes away (a log shipper or a parent that died) while log
// lines are still being written: the compiled server must still end on SIGTERM within a bound,
// and a second SIGTERM must end it at once, whatever the state of its log pipe.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtServer, builtServerEnv } from '../helpers/build.js';
import { newAdminKey } from '../../src/auth/credentials.js';
import { at, call } from '../helpers/http.js';
import { freePort } from '../helpers/port.js';
import { until } from '../helpers/until.js';

let BUILD_DIR = '';

/** The built server with its stdout on a pipe whose reading end this process has closed. */
async function startWithDeadStdout(dataDir: string) {
  const port = await freePort();
  const proc = spawn(process.execPath, [`${BUILD_DIR}/main.js`], {
    env: builtServerEnv({
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      ADMIN_API_KEY: newAdminKey(),
      LOG_LEVEL: 'info',
      RATE_LIMIT_PLAN: 'off',
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  proc.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
    proc.on('exit', (code) => resolve({ code, at: Date.now() })),
  );
  const server = at(`http://127.0.0.1:${port}`);
  await until(
    async () => (await call(server, 'GET', '/api/health').catch(() => null))?.status === 200,
    60_000,
    'the server to start',
  );
  proc.stdout!.destroy(); // the reader is gone: every write to fd 1 now fails with EPIPE
  return { proc, port, server, exited, stderr: () => err };
}

const kill = (proc: ChildProcess) => {
  if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
};

describe('a broken stdout pipe', () => {
  const dirs: string[] = [];
  const dataDir = () => {
    const d = mkdtempSync(path.join(tmpdir(), 'plinth-fault-pipe-'));
    chmodSync(d, 0o711); // as root, the embedded Postgres runs as an unprivileged user
    dirs.push(d);
    return d;
  };
  beforeAll(async () => {
    BUILD_DIR = await builtServer();
  }, 300_000);
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('never blocks a request, and SIGTERM ends the process even when its data dir is removed meanwhile', async () => {
    const dir = dataDir();
    const s = await startWithDeadStdout(dir);
    try {
      // Requests keep being answered while every log line fails to be written.
      for (let i = 0; i < 20; i++) expect((await call(s.server, 'GET', '/api/health')).status).toBe(200);
      const load = Array.from({ length: 50 }, () =>
        call(s.server, 'GET', '/api/nope').then(
          (r) => r.status,
          () => 0,
        ),
      );
      s.proc.kill('SIGTERM');
      // What the issue saw: the starting process removes the data dir during shutdown, so
      // closing logs errors right before the exit.
      rmSync(path.join(dir, 'postgres'), { recursive: true, force: true });
      await Promise.all(load);
      const signalled = Date.now();
      // The bound: 20 s of draining (main.ts forces the exit then) and 1 s for the log, with slack
      // for a loaded machine. Before the fix the process never ended.
      const end = await Promise.race([s.exited, new Promise<null>((r) => setTimeout(() => r(null), 30_000))]);
      expect(end, `still running 30 s after SIGTERM; stderr: ${s.stderr().slice(-2000)}`).not.toBeNull();
      expect(end!.at - signalled).toBeLessThan(30_000);
    } finally {
      kill(s.proc);
      await s.exited;
    }
  }, 120_000);

  it('ends at once on a second SIGTERM while a request still holds the drain', async () => {
    const s = await startWithDeadStdout(dataDir());
    try {
      // A request whose body never finishes: the drain would wait for it.
      const sock = net.connect(s.port, '127.0.0.1');
      await new Promise((r) => sock.once('connect', r));
      sock.on('error', () => {});
      sock.write(
        'POST /api/auth/signin HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"email":',
      );
      await new Promise((r) => setTimeout(r, 300));
      s.proc.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 500));
      expect(s.proc.exitCode).toBeNull(); // still draining
      const second = Date.now();
      s.proc.kill('SIGTERM');
      const end = await Promise.race([s.exited, new Promise<null>((r) => setTimeout(() => r(null), 10_000))]);
      expect(end, 'still running 10 s after the second SIGTERM').not.toBeNull();
      expect(end!.at - second).toBeLessThan(2_000);
      expect(end!.code).not.toBe(0);
      sock.destroy();
    } finally {
      kill(s.proc);
      await s.exited;
    }
  }, 120_000);
});
