// SIGTERM to the compiled server while an upload, a download stream and a function call are
// in flight: each finishes, new connections are refused meanwhile, and the process exits 0;
// and while 24 keep-alive connections send request after request: every request is answered
// (200, or the 503 envelope with Connection: close), none is cut by a reset.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtServer, builtServerEnv } from '../helpers/build.js';
import { newAdminKey } from '../../src/auth/credentials.js';
import { at, call, send } from '../helpers/http.js';
import { freePort } from '../helpers/port.js';
import { until } from '../helpers/until.js';
import { startApp } from '../helpers/app.js';

let BUILD_DIR = '';
const MiB = 1024 * 1024;

describe('SIGTERM with requests in flight', () => {
  let dataDir: string;
  beforeAll(async () => {
    BUILD_DIR = await builtServer();
    dataDir = mkdtempSync(path.join(tmpdir(), 'plinth-fault-term-'));
  }, 300_000);
  afterAll(() => {
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('finishes the upload, the stream and the function call, refuses new connections, exits 0', async () => {
    const port = await freePort();
    const adminKey = newAdminKey();
    const proc = spawn(process.execPath, [`${BUILD_DIR}/main.js`], {
      env: builtServerEnv({
        DATA_DIR: dataDir,
        PORT: String(port),
        HOST: '127.0.0.1',
        ADMIN_API_KEY: adminKey,
        LOG_LEVEL: 'warn',
        RATE_LIMIT_PLAN: 'off',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout.on('data', (d) => (out += d));
    proc.stderr.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
    const server = at(`http://127.0.0.1:${port}`);
    const admin = { 'x-api-key': adminKey };
    try {
      await until(async () => (await call(server, 'GET', '/api/health')).status === 200, 60_000, 'the server to start');
      // A function that holds its answer until told how long; a 12 MiB object to stream.
      const code =
        'export default async (req) => { await new Promise((r) => setTimeout(r, Number(new URL(req.url).searchParams.get("ms")))); return Response.json({ done: true }); }';
      expect(
        (await call(server, 'POST', '/api/functions', { headers: admin, body: { name: 'lingers', code } })).status,
      ).toBe(201);
      expect((await call(server, 'GET', '/functions/lingers?ms=1')).status).toBe(200);
      expect(
        (await call(server, 'POST', '/api/storage/buckets', { headers: admin, body: { bucketName: 'drain' } })).status,
      ).toBe(201);
      const big = new FormData();
      big.append('file', new Blob([Buffer.alloc(12 * MiB, 3)]), 'big.bin');
      const stored = await call(server, 'PUT', '/api/storage/buckets/drain/objects/big.bin', {
        headers: admin,
        raw: big,
      });
      expect(stored.status).toBe(200);

      // In flight: a function call of 2 s, an upload sent over ~1.5 s, a download read slowly.
      const lingering = call(server, 'GET', '/functions/lingers?ms=2000').then((r) => [r.status, r.body] as const);
      const boundary = 'drainboundary';
      let parts = 0;
      const uploadBody = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(
            Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="up.bin"\r\n\r\n`),
          );
        },
        async pull(c) {
          await new Promise((r) => setTimeout(r, 100));
          if (parts++ === 15) {
            c.enqueue(Buffer.from(`\r\n--${boundary}--\r\n`));
            c.close();
          } else c.enqueue(Buffer.alloc(64 * 1024, 5));
        },
      });
      const upload = call(server, 'PUT', '/api/storage/buckets/drain/objects/up.bin', {
        headers: { ...admin, 'content-type': `multipart/form-data; boundary=${boundary}` },
        raw: uploadBody,
      }).then((r) => [r.status, r.body] as const);
      // `connection: close`: the server ends the connection once the response is written, and
      // undici (fetch) reports a keep-alive connection closed while its reader is behind as
      // "other side closed", even with every byte received.
      const download = send(server, 'GET', '/api/storage/buckets/drain/objects/big.bin', {
        headers: { ...admin, connection: 'close' },
      }).then(async (r) => {
        let bytes = 0;
        const reader = r.body!.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          bytes += value.length;
          await new Promise((res) => setTimeout(res, 10)); // a slow reader: the server is still writing at SIGTERM
        }
        return [r.status, bytes] as const;
      });
      // Every request has reached the server before the signal.
      await until(async () => parts >= 3, 10_000, 'the upload to be under way');

      proc.kill('SIGTERM');
      const signalled = Date.now();
      // New connections are refused while the requests drain.
      await until(
        () =>
          new Promise<boolean>((resolve) => {
            const s = net.connect(port, '127.0.0.1');
            s.on('connect', () => (s.destroy(), resolve(false)));
            s.on('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
          }),
        5_000,
        'new connections to be refused',
      );
      const [c, u, d] = await Promise.all([lingering, upload, download]);
      const drained = Date.now();
      expect(c).toEqual([200, { done: true }]);
      expect(u[0]).toBe(200);
      expect(u[1]).toMatchObject({ key: 'up.bin', size: 15 * 64 * 1024 });
      expect(d).toEqual([200, 12 * MiB]);
      expect(await exited).toBe(0);
      // Within the drain deadline (main.ts forces an exit with 1 after 20 s), and promptly once
      // the last request is done: no idle keep-alive connection holds the exit back.
      expect(Date.now() - signalled).toBeLessThan(20_000);
      expect(Date.now() - drained).toBeLessThan(5_000);
    } finally {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      await exited;
      if (proc.exitCode !== 0) console.warn(out.slice(-3000));
    }
  }, 120_000);

  it('answers every request sent on open keep-alive connections after SIGTERM (200 or the 503 envelope, never a reset)', async () => {
    const port = await freePort();
    const proc = spawn(process.execPath, [`${BUILD_DIR}/main.js`], {
      env: builtServerEnv({
        DATA_DIR: dataDir,
        PORT: String(port),
        HOST: '127.0.0.1',
        ADMIN_API_KEY: newAdminKey(),
        LOG_LEVEL: 'warn',
        RATE_LIMIT_PLAN: 'off',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout.on('data', (d) => (out += d));
    proc.stderr.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
    try {
      const server = at(`http://127.0.0.1:${port}`);
      await until(async () => (await call(server, 'GET', '/api/health')).status === 200, 60_000, 'the server to start');
      // Each connection sends its next request as soon as an answer is whole, until the server
      // closes the connection; a connection that closes with a request unanswered is a loss.
      const CONNECTIONS = 24;
      let signalled = false;
      const stats = { sent: 0, answered: 0, after: 0, unavailable: 0, lost: 0, closedByAnswer: 0 };
      const loop = () =>
        new Promise<void>((resolve) => {
          const s = net.connect(port, '127.0.0.1');
          let buf = '';
          let waiting = false;
          let told = false;
          const send = () => {
            waiting = true;
            stats.sent++;
            s.write('GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n');
          };
          s.on('connect', send);
          s.on('data', (d) => {
            buf += d;
            for (;;) {
              const head = buf.indexOf('\r\n\r\n');
              if (head < 0) return;
              const length = Number(/\r\ncontent-length: (\d+)/i.exec(buf.slice(0, head))?.[1] ?? 0);
              if (buf.length < head + 4 + length) return;
              const status = buf.slice(9, 12);
              const close = /\r\nconnection: close/i.test(buf.slice(0, head));
              buf = buf.slice(head + 4 + length);
              waiting = false;
              stats.answered++;
              if (signalled) stats.after++;
              if (status === '503') stats.unavailable++;
              if (close) told = true;
              else send();
            }
          });
          s.on('error', () => {});
          s.on('close', () => {
            if (waiting) stats.lost++;
            else if (told) stats.closedByAnswer++;
            resolve();
          });
        });
      const loops = Array.from({ length: CONNECTIONS }, loop);
      await until(async () => stats.answered > 500, 30_000, 'the connections to be busy');
      proc.kill('SIGTERM');
      signalled = true;
      await Promise.all(loops);
      expect(await exited).toBe(0);
      expect(stats.lost, JSON.stringify(stats)).toBe(0);
      expect(stats.answered).toBe(stats.sent);
      // Every connection was still open at the signal and was ended by an answer with
      // Connection: close (the 503 envelope, or a request in flight at the signal).
      expect(stats.closedByAnswer).toBe(CONNECTIONS);
      expect(stats.unavailable).toBeGreaterThan(0);
    } finally {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      await exited;
      if (proc.exitCode !== 0) console.warn(out.slice(-3000));
    }
  }, 120_000);
});

describe('a request that arrives while the server drains', () => {
  it("is answered with the envelope, Retry-After and Connection: close, not Fastify's own 503 body", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let arrived!: () => void;
    const inFlight = new Promise<void>((r) => (arrived = r));
    const t = await startApp('embedded', {}, (app) => {
      app.get('/api/_probe/hold', { config: { access: 'open' } }, async () => {
        arrived();
        await held;
        return { held: true };
      });
    });
    let closed: Promise<void> | null = null;
    try {
      const { port } = new URL(t.url);
      const socket = net.connect(Number(port), '127.0.0.1');
      let raw = '';
      socket.on('data', (d) => (raw += d));
      const ended = new Promise<void>((r) => socket.on('close', () => r()));
      socket.write('GET /api/_probe/hold HTTP/1.1\r\nHost: x\r\n\r\n');
      await inFlight;
      closed = t.app.close(); // drains: the held request keeps its connection open
      await until(async () => t.app.server.listening === false, 5_000, 'the server to stop listening');
      // A second request on the same (pipelined) connection, read once the first is answered.
      socket.write('GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n');
      release();
      await ended;
      const answers = raw.split(/(?=HTTP\/1\.1 )/);
      expect(answers).toHaveLength(2);
      expect(answers[0]).toMatch(/^HTTP\/1\.1 200/);
      expect(answers[1]).toMatch(/^HTTP\/1\.1 503/);
      expect(answers[1]).toMatch(/\r\nretry-after: 5\r\n/i);
      expect(answers[1]).toMatch(/\r\nconnection: close\r\n/i);
      expect(answers[1]).toMatch(/\r\nx-request-id: /i);
      const body = JSON.parse(answers[1]!.slice(answers[1]!.indexOf('\r\n\r\n') + 4));
      expect(body).toEqual({
        statusCode: 503,
        error: 'SERVICE_UNAVAILABLE',
        message: 'The server is shutting down.',
        nextActions: expect.stringContaining('Retry-After'),
      });
    } finally {
      release();
      await (closed ?? t.app.close());
      await t.close().catch(() => {});
    }
  }, 30_000);
});
