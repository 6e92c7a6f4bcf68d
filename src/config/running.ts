// The configuration the server runs with: the variables read, then what they add up to in
// this process (GET /api/admin/config, the MCP get-config tool).
import type { Db } from '../db/types.js';
import { derivedVariables, type ConfigVariable } from './effective.js';
import type { Config } from './index.js';

/** The parts of a running server the effective configuration reports on (the composition root's `Deps` has them). */
export interface RunningServer {
  config: Readonly<Config>;
  version: string;
  db: Db;
  storage: { driver: { kind: 'local' | 's3' } };
  jobs: object | null;
  ai: { configured: boolean };
}

/** Every variable read, secrets masked, then the facts derived from them and from what started. */
export function effectiveConfig(server: RunningServer): ConfigVariable[] {
  const { config, db } = server;
  // The embedded server is the database whose cluster this process runs (the backup route asks the same).
  const embedded = Boolean((db as { cluster?: unknown }).cluster);
  return [
    ...config.variables,
    ...derivedVariables({
      version: server.version,
      database: embedded ? 'embedded' : db.kind === 'pglite' ? 'pglite' : 'server',
      storage: server.storage.driver.kind,
      jobs: server.jobs !== null,
      ai: server.ai.configured,
      smtp: config.auth.smtpUrl !== null,
      redis: config.rateLimit.redisUrl !== null,
      oauthProviders: config.auth.oauth.providers.map((p) => p.name),
    }),
  ];
}
