// Plinth in this process on a configuration of the test's choosing (its own DATABASE_URL,
// REDIS_URL, S3 or DATA_DIR), listening on a random port.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config/index.js';
import { buildDeps, type Deps } from '../../src/deps.js';
import { buildApp } from '../../src/app.js';
import { newAdminKey } from '../../src/auth/credentials.js';

export interface FaultApp {
  app: FastifyInstance;
  deps: Deps;
  url: string;
  adminKey: string;
  dataDir: string;
  close(): Promise<void>;
}

export async function startPlinth(env: Record<string, string>): Promise<FaultApp> {
  const dataDir = env.DATA_DIR ?? mkdtempSync(path.join(tmpdir(), 'plinth-fault-'));
  const adminKey = newAdminKey();
  const config = loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_PLAN: 'off', ADMIN_API_KEY: adminKey, HOST: '127.0.0.1', PORT: '0', ...env, DATA_DIR: dataDir });
  const deps = await buildDeps(config);
  const app = await buildApp(deps, { logStream: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  return {
    app,
    deps,
    url,
    adminKey,
    dataDir,
    async close() {
      await app.close().catch(() => {});
      await deps.close().catch(() => {});
      if (!env.DATA_DIR) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
