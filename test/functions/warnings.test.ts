import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config/index.js';
import { buildDeps, type Deps } from '../../src/deps.js';
import { newAdminKey } from '../../src/auth/credentials.js';
import type { HostPool } from '../../src/functions/runtime/pool.js';
import { serve } from '../helpers/app.js';
import { freshDb } from '../helpers/db.js';
import { at, call } from '../helpers/http.js';
import { until } from '../helpers/until.js';

// The function runtime's warnings (a Deno process that exits on its own, one that fails to
// start, a bridge error, function logs that cannot be stored) reach the operator: the process's
// stdout at LOG_LEVEL=warn and the log store (source functions). Issue #39 item 1: the
// composition root once handed the runtime no `warn`, and each of them was dropped silently.
describe('function runtime warnings', () => {
  const stdout: Array<Record<string, unknown>> = [];
  const sink = { write: (line: string) => stdout.push(JSON.parse(line)) };
  let deps: Deps;
  let app: FastifyInstance;
  let url: string;
  let drop: () => Promise<void>;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'plinth-test-'));
  const adminKey = newAdminKey();
  const admin = { 'x-api-key': adminKey };

  beforeAll(async () => {
    const fresh = await freshDb('embedded');
    drop = fresh.drop;
    const config = loadConfig({
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PLAN: 'off',
      ADMIN_API_KEY: adminKey,
      HOST: '127.0.0.1',
      PORT: '0',
    });
    deps = await buildDeps(config, { db: fresh.db, engine: 'embedded', stdout: sink });
    ({ app, url } = await serve(deps));
  });
  afterAll(async () => {
    await app?.close();
    await deps?.close();
    await drop?.();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('tells stdout and the log store when a function process exits on its own', async () => {
    const created = await call(at(url), 'POST', '/api/functions', {
      headers: admin,
      body: { name: 'steady', code: 'export default () => new Response("up")' },
    });
    expect(created.status).toBe(201);
    const id = created.body.function.id as string;
    expect((await call(at(url), 'GET', '/functions/steady')).text).toBe('up');
    const pid = (deps.functions.runtime as HostPool).pidOf(id);
    expect(pid).not.toBeNull();
    process.kill(pid!, 'SIGKILL');

    await until(async () => stdout.some((l) => l.msg === 'function process exited'), 10_000, 'the line on stdout');
    const line = stdout.find((l) => l.msg === 'function process exited')!;
    expect(line).toMatchObject({ level: 40, functionId: id, signal: 'SIGKILL' });
    await until(
      async () => {
        const logs = await call(at(url), 'GET', '/api/logs/functions?level=warn&q=exited', { headers: admin });
        return logs.body.logs.some((l: { eventMessage: string }) => l.eventMessage === 'function process exited');
      },
      10_000,
      'the line in the log store',
    );
  });
});
