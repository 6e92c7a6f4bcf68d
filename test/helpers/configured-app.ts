// Plinth started the way `npm start` starts it: the database comes from the configuration
// (no injected database), so DATA_DIR without DATABASE_URL runs the embedded Postgres.
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config/index.js';
import { buildDeps, type Deps } from '../../src/deps.js';
import { serve } from './app.js';

export interface ConfiguredApp {
  app: FastifyInstance;
  deps: Deps;
  url: string;
  fetch(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

export async function startConfiguredApp(env: Record<string, string>): Promise<ConfiguredApp> {
  const config = loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_PLAN: 'off', HOST: '127.0.0.1', PORT: '0', ...env });
  const deps = await buildDeps(config);
  const { app, url } = await serve(deps, { logStream: process.env.DEBUG_LOG ? process.stderr : false });
  return {
    app,
    deps,
    url,
    fetch: (p, init) => fetch(url + p, init),
    async close() {
      // The test's fetch keeps connections alive: without this, close() waits for them to time out.
      app.server.closeAllConnections();
      await app.close();
      await deps.close();
    },
  };
}
