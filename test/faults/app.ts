// Plinth in this process on a configuration of the test's choosing (its own DATABASE_URL,
// REDIS_URL, S3 or DATA_DIR), listening on a random port, with an admin key the test knows.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { newAdminKey } from '../../src/auth/credentials.js';
import { startConfiguredApp, type ConfiguredApp } from '../helpers/configured-app.js';

export interface FaultApp extends ConfiguredApp {
  adminKey: string;
  dataDir: string;
}

export async function startPlinth(env: Record<string, string>): Promise<FaultApp> {
  const dataDir = env.DATA_DIR ?? mkdtempSync(path.join(tmpdir(), 'plinth-fault-'));
  const adminKey = newAdminKey();
  const started = await startConfiguredApp({ ADMIN_API_KEY: adminKey, ...env, DATA_DIR: dataDir });
  return {
    ...started,
    adminKey,
    dataDir,
    async close() {
      await started.close().catch(() => {});
      if (!env.DATA_DIR) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
