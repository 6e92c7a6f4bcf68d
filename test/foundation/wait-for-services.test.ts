// A server Postgres and Redis that are not there when Plinth starts (a compose stack or a
// Kubernetes rollout): the real server process waits, answers /api/health with 503 and the
// reason, and starts once they appear; a database lost later shows in ?checks=true with its
// reason and comes back. "Appearing" is a TCP relay in front of the machine's real Postgres
// and Redis, opened and closed by the test.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresService, redisService, unreachableReason } from '../../src/lib/wait-for-services.js';
import { builtServer, builtServerEnv } from '../helpers/build.js';
import { at, call } from '../helpers/http.js';
import { freePort } from '../helpers/port.js';

const PG_URL = process.env.TEST_DATABASE_URL;
const REDIS_URL = process.env.TEST_REDIS_URL;
let BUILD_DIR = '';
const DB = `plinth_wait_${process.pid}`;
const dataDir = mkdtempSync(path.join(tmpdir(), 'plinth-wait-'));

beforeAll(async () => {
  BUILD_DIR = await builtServer();
  if (!PG_URL) return;
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  await c.query(`create database ${DB}`);
  await c.end();
}, 300_000);

afterAll(async () => {
  rmSync(dataDir, { recursive: true, force: true });
  if (!PG_URL) return;
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  await c.query(`drop database if exists ${DB} with (force)`);
  await c.end();
});

/** A TCP relay on `port` to `target`, opened and closed at will (closing also cuts its connections). */
function relay(port: number, target: { host: string; port: number }) {
  let server: net.Server | null = null;
  const sockets = new Set<net.Socket>();
  return {
    open: () =>
      new Promise<void>((resolve) => {
        server = net.createServer((c) => {
          const up = net.connect(target.port, target.host);
          for (const s of [c, up]) {
            sockets.add(s);
            s.on('error', () => {});
            s.on('close', () => sockets.delete(s));
          }
          c.pipe(up).pipe(c);
        });
        server.listen(port, '127.0.0.1', () => resolve());
      }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        if (!server) resolve();
        else server.close(() => resolve());
        server = null;
      }),
  };
}

async function health(port: number, query = ''): Promise<{ status: number; body: Record<string, unknown> } | null> {
  try {
    const r = await call(at(`http://127.0.0.1:${port}`), 'GET', `/api/health${query}`);
    return { status: r.status, body: r.body as Record<string, unknown> };
  } catch {
    return null;
  }
}

async function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, ms = 90_000): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const v = await fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe.skipIf(!PG_URL || !REDIS_URL)('a server Postgres and Redis that are not there yet', () => {
  it('names an unresolvable host and a refused connection', async () => {
    const err = await postgresService('postgres://u:secret@db.invalid:5432/x')
      .probe()
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(unreachableReason(err)).toBe('its host db.invalid cannot be resolved (ENOTFOUND)');
    const port = await freePort();
    const refused = await redisService(`redis://127.0.0.1:${port}`)
      .probe()
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(unreachableReason(refused)).toBe(
      'the connection was refused (ECONNREFUSED): nothing listens at that address',
    );
  }, 30_000);

  it('waits with 503 and the reason, starts when they appear, and reports a database lost later', async () => {
    const [pgPort, redisPort, port] = [await freePort(), await freePort(), await freePort()];
    const pgTarget = new URL(PG_URL!);
    const redisTarget = new URL(REDIS_URL!);
    const pgRelay = relay(pgPort, { host: pgTarget.hostname, port: Number(pgTarget.port || 5432) });
    const redisRelay = relay(redisPort, { host: redisTarget.hostname, port: Number(redisTarget.port || 6379) });
    const url = new URL(PG_URL!);
    url.host = `127.0.0.1:${pgPort}`;
    url.pathname = `/${DB}`;
    const proc = spawn(process.execPath, [`${BUILD_DIR}/main.js`], {
      env: builtServerEnv({
        DATA_DIR: dataDir,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: url.toString(),
        REDIS_URL: `redis://127.0.0.1:${redisPort}`,
        LOG_LEVEL: 'warn',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout.on('data', (d) => (out += d));
    proc.stderr.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
    try {
      const waiting = await until('the waiting answer', () => health(port));
      expect(waiting.status).toBe(503);
      expect(waiting.body).toMatchObject({
        status: 'starting',
        checks: {
          database: {
            status: 'down',
            message:
              'database is not reachable: the connection was refused (ECONNREFUSED): nothing listens at that address',
          },
          redis: {
            status: 'down',
            message: expect.stringContaining('redis is not reachable: the connection was refused'),
          },
        },
      });
      expect((await health(port, '?checks=true'))?.status).toBe(503);
      const other = await call(at(`http://127.0.0.1:${port}`), 'GET', '/api/database/tables');
      expect(other.status).toBe(503);
      expect(other.body).toMatchObject({ error: 'SERVICE_UNAVAILABLE' });
      // One line per reason, not one per retry; the password is never printed.
      expect(out.match(/database 127\.0\.0\.1:\d+\/plinth_wait_\d+ is not reachable/g)).toHaveLength(1);

      // The database appears; Redis still missing: still waiting, now for Redis alone.
      await pgRelay.open();
      const redisOnly = await until('redis alone', async () => {
        const h = await health(port);
        const checks = h?.body.checks as Record<string, unknown> | undefined;
        return checks && !checks.database && checks.redis ? h : null;
      });
      expect(redisOnly.status).toBe(503);
      await redisRelay.open();
      await until('healthy', async () => (await health(port, '?checks=true'))?.status === 200, 120_000);
      expect(out).toContain('answers');

      // Lost later: the readiness check says why; back when it returns.
      await pgRelay.close();
      const lost = await until('database down', async () => {
        const h = await health(port, '?checks=true');
        return h?.status === 503 ? h : null;
      });
      expect((lost.body.checks as Record<string, { message: string }>).database?.message).toMatch(
        /^database is not reachable: (the connection was refused|the connection was closed by the server)/,
      );
      expect((await health(port))?.status).toBe(200); // liveness: the process is fine
      await pgRelay.open();
      await until('recovered', async () => (await health(port, '?checks=true'))?.status === 200, 60_000);
      expect(out).not.toContain(url.password || 'no-password-in-url');
    } finally {
      proc.kill('SIGTERM');
      await exited;
      await pgRelay.close();
      await redisRelay.close();
    }
  }, 240_000);
});
