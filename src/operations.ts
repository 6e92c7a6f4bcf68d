// What agents and operators read about the backend, composed for the composition root
// (deps.ts): metadata, the advisor, the generated types, the docs for agents, MCP usage, backups.
import type { Config } from './config/index.js';
import type { Db } from './db/types.js';
import type { LogWriter } from './logs/types.js';
import type { AuthService } from './auth/service.js';
import type { OAuthService } from './auth/oauth/index.js';
import type { FunctionService } from './functions/index.js';
import type { ScheduleService } from './schedules/service.js';
import { REALTIME_TRIGGER } from './realtime/tables.js';
import { MetadataService } from './metadata/service.js';
import { authSection, databaseSection, functionsSection, realtimeSection, schedulesSection, storageSection } from './metadata/sections.js';
import { publicAuthConfig } from './auth/public-config.js';
import { AdvisorService } from './advisor/service.js';
import { functionUrls, scheduleUrls } from './advisor/urls.js';
import { TypeGenerator } from './database/typegen.js';
import { McpUsage } from './mcp/usage.js';
import { AgentDocs } from './mcp/docs.js';
import { loadDocBundle } from './mcp/docs-bundle.js';
import { derivedVariables, type ConfigVariable } from './config/effective.js';
import type { Deps } from './deps.js';
import { createBackups } from './admin/backups.js';

/**
 * Metadata (one section per area) and the advisor (one URL source per kind of code that calls
 * URLs: functions, schedules), on Plinth's own connection; the backups of the embedded server.
 */
export function operations(
  config: Readonly<Config>,
  db: Db,
  areas: { oauth: OAuthService; auth: AuthService; functions: FunctionService; schedules: ScheduleService; logs: LogWriter },
  version: string,
  closers: Array<() => Promise<unknown>>,
) {
  const { oauth, auth, functions, schedules } = areas;
  const backups = createBackups(config, db, version, areas.logs);
  closers.push(() => backups.close());
  const mcpUsage = new McpUsage(db);
  closers.push(() => mcpUsage.flush());
  const metadata = new MetadataService({ db, version, realtimeTrigger: REALTIME_TRIGGER }, [
    authSection(() => publicAuthConfig(oauth, auth.requireEmailVerification)),
    databaseSection(db, REALTIME_TRIGGER),
    storageSection(db),
    functionsSection(() => functions.list()),
    realtimeSection(db, REALTIME_TRIGGER),
    schedulesSection(() => schedules.list()),
  ]);
  const advisor = new AdvisorService(db, [functionUrls(db), scheduleUrls(() => schedules.list())]);
  return { metadata, advisor, typegen: new TypeGenerator(db), mcpUsage, agentDocs: new AgentDocs(loadDocBundle()), backups };
}


/**
 * The configuration the server runs with, secrets masked (GET /api/admin/config, the MCP
 * get-config tool): every variable read, then what it adds up to in this process.
 */
export function effectiveConfig(deps: Pick<Deps, 'config' | 'version' | 'db' | 'storage' | 'jobs' | 'ai'>): ConfigVariable[] {
  const { config, db } = deps;
  // The embedded server is the database whose cluster this process runs (the backup route asks the same).
  const embedded = Boolean((db as { cluster?: unknown }).cluster);
  return [
    ...config.variables,
    ...derivedVariables({
      version: deps.version,
      database: embedded ? 'embedded' : db.kind === 'pglite' ? 'pglite' : 'server',
      storage: deps.storage.driver.kind,
      jobs: deps.jobs !== null,
      ai: deps.ai.configured,
      smtp: config.auth.smtpUrl !== null,
      redis: config.rateLimit.redisUrl !== null,
      oauthProviders: config.auth.oauth.providers.map((p) => p.name),
    }),
  ];
}
