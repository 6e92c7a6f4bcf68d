// DATA_DIR at start, with real processes of the built server: one Plinth per data dir (a second
// one refuses to start with one line, and starts once the first has stopped or died), and a
// data dir this user cannot write is named in one line with a non-zero exit.
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtServer, builtServerEnv } from '../helpers/build.js';
import { at, call } from '../helpers/http.js';
import { freePort } from '../helpers/port.js';

let BUILD_DIR = '';
beforeAll(async () => {
  BUILD_DIR = await builtServer();
}, 300_000);

const root = mkdtempSync(path.join(tmpdir(), 'plinth-datadir-'));
chmodSync(root, 0o755);
afterAll(() => rmSync(root, { recursive: true, force: true }));

function start(env: Record<string, string>, uid?: number) {
  const proc = spawn(process.execPath, [`${BUILD_DIR}/main.js`], {
    env: builtServerEnv({ HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
    uid,
    gid: uid,
  });
  let out = '';
  let err = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return { proc, stdout: () => out, stderr: () => err, exited };
}

async function waitHealthy(port: number, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await call(at(`http://127.0.0.1:${port}`), 'GET', '/api/health').then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no healthy server on port ${port}`);
}

describe('one Plinth per DATA_DIR', () => {
  it('a second process on the same DATA_DIR refuses to start, naming the first; it starts once the first is gone', async () => {
    const dataDir = path.join(root, 'shared');
    const [p1, p2, p3] = [await freePort(), await freePort(), await freePort()];
    const first = start({ DATA_DIR: dataDir, PORT: String(p1) });
    try {
      await waitHealthy(p1);
      const second = start({ DATA_DIR: dataDir, PORT: String(p2) });
      expect(await second.exited).toBe(1);
      const lines = second.stderr().trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`DATA_DIR ${dataDir} is in use by another Plinth (pid ${first.proc.pid} on host `);
      expect(second.stdout()).toBe('');
      // The first one never noticed: it still answers, and its database is its own.
      expect((await call(at(`http://127.0.0.1:${p1}`), 'GET', '/api/health')).status).toBe(200);

      // Killed without a chance to clean up: the lock goes with the process, the next one starts
      // (and stops the orphaned Postgres the killed one left).
      first.proc.kill('SIGKILL');
      await first.exited;
      const third = start({ DATA_DIR: dataDir, PORT: String(p3) });
      try {
        await waitHealthy(p3);
      } finally {
        third.proc.kill('SIGTERM');
        expect(await third.exited).toBe(0);
      }
      // Stopped cleanly: the lock's socket is gone with it.
      const fourth = start({ DATA_DIR: dataDir, PORT: String(p2) });
      try {
        await waitHealthy(p2);
      } finally {
        fourth.proc.kill('SIGTERM');
        expect(await fourth.exited).toBe(0);
      }
    } finally {
      first.proc.kill('SIGKILL');
    }
  }, 240_000);

  it('two processes started at the same moment: exactly one runs', async () => {
    const dataDir = path.join(root, 'race');
    const ports = [await freePort(), await freePort()];
    const both = ports.map((p) => start({ DATA_DIR: dataDir, PORT: String(p) }));
    try {
      const outcome = await Promise.race([
        Promise.any(both.map((s) => s.exited.then((code) => ({ code, s })))),
        new Promise<null>((r) => setTimeout(() => r(null), 60_000)),
      ]);
      expect(outcome?.code).toBe(1);
      expect(outcome?.s.stderr()).toContain('is in use by another Plinth');
      const winner = outcome?.s === both[0] ? 1 : 0;
      await waitHealthy(ports[winner] as number);
    } finally {
      for (const s of both) s.proc.kill('SIGTERM');
      await Promise.all(both.map((s) => s.exited));
    }
  }, 180_000);
});

describe('a DATA_DIR that cannot be used', () => {
  it('not writable by this user: one line naming it, exit 1', async () => {
    const dir = path.join(root, 'readonly');
    mkdirSync(dir);
    const isRoot = process.getuid?.() === 0;
    chmodSync(dir, isRoot ? 0o755 : 0o555); // root writes anywhere: the server runs as nobody instead
    const s = start({ DATA_DIR: dir, PORT: String(await freePort()) }, isRoot ? 65534 : undefined);
    expect(await s.exited).toBe(1);
    const lines = s.stderr().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(`DATA_DIR ${dir} is not writable \\(uid \\d+\\): permission denied\\. Mount a writable volume there`),
    );
    const sub = path.join(dir, 'sub');
    const t = start({ DATA_DIR: sub, PORT: String(await freePort()) }, isRoot ? 65534 : undefined);
    expect(await t.exited).toBe(1);
    expect(t.stderr().trim()).toMatch(
      new RegExp(`^Plinth failed to start: DATA_DIR ${sub} cannot be created \\(uid \\d+\\): permission denied\\.`),
    );
  }, 60_000);

  it('a file where the folder should be: one line, exit 1', async () => {
    const file = path.join(root, 'a-file');
    writeFileSync(file, 'x');
    const s = start({ DATA_DIR: file, PORT: String(await freePort()) });
    expect(await s.exited).toBe(1);
    expect(s.stderr().trim()).toBe(
      `Plinth failed to start: DATA_DIR ${file} is a file, not a folder. Mount a writable volume there (e.g. podman run -v plinth-data:${file}) or set DATA_DIR to a folder this user can write.`,
    );
  }, 60_000);
});
