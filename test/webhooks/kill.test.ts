// A webhook delivery cut by kill -9 of Plinth mid-attempt, taken over after a restart: the
// delivery log counts both attempts (the one that was cut, and the one that succeeded).
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAdminKey } from '../../src/auth/credentials.js';
import { backends, freshDb } from '../helpers/db.js';
import { at, call } from '../helpers/http.js';
import { until } from '../helpers/until.js';
import { freePort } from '../helpers/port.js';

// One backend: the count is Plinth's, whatever the database (each run restarts a real process).
describe('a webhook delivery cut by kill -9', () => {
  const backend = backends()[0]!;
  let receiver: http.Server;
  let hits = 0;
  let receiverPort = 0;
  beforeAll(async () => {
    // The first attempt is held unanswered (Plinth is killed meanwhile); later ones get 200.
    receiver = http.createServer((req, res) => {
      req.resume();
      if (++hits === 1) return;
      res.writeHead(200).end('ok');
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    receiverPort = (receiver.address() as { port: number }).port;
  });
  afterAll(async () => {
    receiver.closeAllConnections();
    await new Promise((r) => receiver.close(r));
  });

  it('counts the attempt that was cut', async () => {
    const { url: databaseUrl, drop } = await freshDb(backend);
    const dataDir = mkdtempSync(path.join(tmpdir(), 'plinth-webhook-kill-'));
    const adminKey = newAdminKey();
    const port = await freePort();
    const server = at(`http://127.0.0.1:${port}`);
    const admin = { 'x-api-key': adminKey };
    const start = () => {
      const env: Record<string, string> = {};
      for (const [k, v] of Object.entries(process.env))
        if (v !== undefined && !/^(DATABASE_URL|REDIS_URL|S3_|ANON_KEY|JWT_SECRET)/.test(k)) env[k] = v;
      const p = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        env: {
          ...env,
          DATABASE_URL: databaseUrl,
          DATA_DIR: dataDir,
          PORT: String(port),
          HOST: '127.0.0.1',
          ADMIN_API_KEY: adminKey,
          LOG_LEVEL: 'warn',
          RATE_LIMIT_PLAN: 'off',
          OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
          WEBHOOK_TIMEOUT_MS: '1000',
          WEBHOOK_RETRY_DELAY_SECONDS: '1',
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      return p;
    };
    const ready = () =>
      until(
        async () => (await call(server, 'GET', '/api/health').catch(() => null))?.status === 200,
        120_000,
        'Plinth to start',
      );
    let proc: ChildProcess = start();
    try {
      await ready();
      const sql = async (query: string) =>
        expect((await call(server, 'POST', '/api/database/sql', { headers: admin, body: { query } })).status).toBe(200);
      await sql('create table public.orders (id serial primary key, item text)');
      const hook = await call(server, 'POST', '/api/database/webhooks', {
        headers: admin,
        body: { name: 'cut', table: 'orders', events: ['INSERT'], url: `http://127.0.0.1:${receiverPort}/hook` },
      });
      expect(hook.status).toBe(201);
      const { id } = hook.body;
      await sql(`insert into public.orders (item) values ('one')`);
      await until(async () => hits === 1, 20_000, 'the first attempt to reach the receiver');
      proc.kill('SIGKILL');
      await new Promise((r) => proc.once('exit', r));
      proc = start();
      await ready();
      // The job of the cut attempt expires (WEBHOOK_TIMEOUT_MS + 5 s) and is retried.
      const deliveries = async () =>
        (await call(server, 'GET', `/api/database/webhooks/${id}/deliveries`, { headers: admin })).body as Array<{
          status: string;
          attempts: number;
        }>;
      await until(
        async () => (await deliveries())[0]?.status === 'succeeded',
        60_000,
        'the delivery to succeed after the restart',
      );
      expect(hits).toBe(2);
      expect((await deliveries())[0]).toMatchObject({ status: 'succeeded', attempts: 2 });
    } finally {
      proc.kill('SIGKILL');
      await drop().catch(() => {});
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});
