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
import {
  authSection,
  databaseSection,
  functionsSection,
  realtimeSection,
  schedulesSection,
  storageSection,
} from './metadata/sections.js';
import { publicAuthConfig } from './auth/public-config.js';
import { AdvisorService } from './advisor/service.js';
import { functionUrls, scheduleUrls } from './advisor/urls.js';
import { TypeGenerator } from './database/typegen.js';
import { McpUsage } from './mcp/usage.js';
import { AgentDocs } from './mcp/docs.js';
import { loadDocBundle } from './mcp/docs-bundle.js';
import { createBackups } from './admin/backups.js';
import type { Lifecycle } from './lib/lifecycle.js';

/**
 * Metadata (one section per area) and the advisor (one URL source per kind of code that calls
 * URLs: functions, schedules), on Plinth's own connection; the backups of the embedded server.
 * The app's tables are described on the owner's pool (`ownerDb`): the names, types, defaults and
 * policies they show are written as the app's own SQL sees them (`authors`, not
 * `public.authors`), which Plinth's own connection, resolving names in pg_catalog only, would
 * qualify.
 */
export function operations(
  config: Readonly<Config>,
  db: Db,
  ownerDb: Db,
  areas: {
    oauth: OAuthService;
    auth: AuthService;
    functions: FunctionService;
    schedules: ScheduleService;
    logs: LogWriter;
  },
  version: string,
  life: Lifecycle,
) {
  const { oauth, auth, functions, schedules } = areas;
  const backups = createBackups(config, db, version, areas.logs);
  life.onClose(() => backups.close());
  const mcpUsage = new McpUsage(db);
  life.onClose(() => mcpUsage.flush());
  const metadata = new MetadataService({ db: ownerDb, version, realtimeTrigger: REALTIME_TRIGGER }, [
    authSection(() => publicAuthConfig(oauth, auth.requireEmailVerification)),
    databaseSection(ownerDb, REALTIME_TRIGGER),
    storageSection(db),
    functionsSection(() => functions.list()),
    realtimeSection(db, REALTIME_TRIGGER),
    schedulesSection(() => schedules.list()),
  ]);
  const advisor = new AdvisorService(db, [functionUrls(db), scheduleUrls(() => schedules.list())]);
  return {
    metadata,
    advisor,
    typegen: new TypeGenerator(db),
    mcpUsage,
    agentDocs: new AgentDocs(loadDocBundle),
    backups,
  };
}
