import type { TSchema } from 'typebox';
import type { TablesService } from '../database/tables.js';
import type { RecordsService } from '../database/records.js';
import type { StorageService } from '../storage/service.js';
import type { FunctionService } from '../functions/service.js';
import type { AuthService } from '../auth/service.js';
import type { AiGateway } from '../ai/gateway.js';
import type { TypeGenerator } from '../database/typegen.js';
import type { MetadataService } from '../metadata/service.js';
import type { LogsService } from '../logs/service.js';
import type { MigrationsService } from '../database/migrations/service.js';
import type { AdvisorService } from '../advisor/service.js';
import type { ScheduleService } from '../schedules/service.js';
import type { WebhookService } from '../webhooks/service.js';
import type { EmailService } from '../email/service.js';
import type { AgentDocs } from './docs.js';
import type { McpUsage } from './usage.js';
import type { ConfigVariable } from '../config/effective.js';

/**
 * The services the tools call: the same objects the HTTP routes call (STYLE.md 16), handed
 * in by the composition root. A tool only adapts input and output.
 */
export interface McpServices {
  tables: TablesService;
  records: RecordsService;
  storage: StorageService;
  functions: FunctionService;
  auth: AuthService;
  ai: AiGateway;
  typegen: TypeGenerator;
  metadata: MetadataService;
  logs: LogsService;
  migrations: MigrationsService;
  advisor: AdvisorService;
  schedules: ScheduleService;
  webhooks: WebhookService;
  email: EmailService;
  docs: AgentDocs;
  usage: McpUsage;
  anonKey: string;
  /** The configuration the server runs with, secrets masked (GET /api/admin/config). */
  effectiveConfig: () => ConfigVariable[];
}

/** What one tool call sees. */
export interface ToolContext {
  services: McpServices;
  /** The instance's own base URL (links, signed URLs, docs). */
  baseUrl: string;
  /** Aborted when the client cancels the call (notifications/cancelled) or the session ends. */
  signal: AbortSignal;
}

/** A tool answers text (sent as it is) or a value (sent as compact JSON). */
export type ToolOutput = string | Record<string, unknown> | unknown[];

/** One MCP tool: a name, a description written for an agent, its input schema, and a thin call into a service. */
export interface McpTool<A = Record<string, unknown>> {
  name: string;
  description: string;
  /** A JSON Schema object (TypeBox); checked before `run`, defaults applied. */
  input: TSchema;
  /** True when the tool changes nothing: only these are offered on a read-only connection. */
  readOnly: boolean;
  /** True when the tool may destroy data (hint for clients that ask before such calls). */
  destructive?: boolean;
  run(args: A, ctx: ToolContext): Promise<ToolOutput>;
}

/** Declares a tool with its argument type inferred from nothing but the call site. */
export function tool<A>(t: McpTool<A>): McpTool {
  return t as unknown as McpTool;
}
