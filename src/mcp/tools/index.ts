// Every MCP tool, by feature group. A group is one file of thin adapters over its area's
// service; adding a group is one file here and one line below.
import type { McpTool } from '../types.js';
import { docsTools } from './docs.js';
import { databaseTools } from './database.js';
import { recordsTools } from './records.js';
import { storageTools } from './storage.js';
import { functionTools } from './functions.js';
import { secretTools } from './secrets.js';
import { authTools } from './auth.js';
import { aiTools } from './ai.js';
import { metadataTools } from './metadata.js';
import { logTools } from './logs.js';
import { migrationTools } from './migrations.js';
import { advisorTools } from './advisor.js';
import { scheduleTools } from './schedules.js';
import { webhookTools } from './webhooks.js';
import { emailTools } from './email.js';

export const ALL_TOOLS: readonly McpTool[] = [
  ...docsTools,
  ...databaseTools,
  ...recordsTools,
  ...storageTools,
  ...functionTools,
  ...secretTools,
  ...authTools,
  ...aiTools,
  ...metadataTools,
  ...logTools,
  ...migrationTools,
  ...advisorTools,
  ...scheduleTools,
  ...webhookTools,
  ...emailTools,
];
