import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import type { Config } from './config/index.js';
import type { Db } from './db/types.js';
import { openDatabase, type DbEngine } from './db/open.js';
import { migrate } from './db/migrate.js';
import { openOwner, type Owner } from './db/owner.js';
import { loadCredentials, type Credentials } from './auth/credentials.js';
import { TokenSigner, functionCredentials } from './auth/tokens.js';
import { IdentityResolver, dbSessionCheck } from './auth/identity.js';
import { createImages, createResumable, createStorage, type ImageTransforms, type ResumableUploads, type StorageService } from './storage/index.js';
import { SchemaCache } from './database/schema.js';
import { RecordsService } from './database/records.js';
import { TablesService } from './database/tables.js';
import { MigrationsService } from './database/migrations/service.js';
import { createAiGateway, type AiGateway } from './ai/index.js';
import { createMailer, SmtpMailer, type Mailer } from './auth/mailer.js';
import { AuthGuard } from './auth/guard.js';
import { FallbackCounter, MemoryCounter, RedisCounter } from './lib/counter.js';
import { EmailCodes } from './auth/codes.js';
import { AuthService } from './auth/service.js';
import { OAuthService } from './auth/oauth/index.js';
import { buildFunctions, type FunctionService } from './functions/index.js';
import { dataDirHealth } from './lib/disk.js';
import { AuditedAuthService } from './auth/audit.js';
import { UserAdmin } from './auth/user-admin.js';
import { LogsService, postgresLogSink } from './logs/index.js';
import { Metrics, sumPoolStats } from './metrics/index.js';
import type { UsageHistory } from './metrics/history.js';
import type { Jobs } from './jobs/index.js';
import type { ScheduleService } from './schedules/service.js';
import type { WebhookService } from './webhooks/service.js';
import type { EmailService } from './email/service.js';
import type { OutboundPolicy } from './lib/outbound.js';
import { buildEmail, startAutomation } from './automation.js';
import { operations } from './operations.js';
import type { MetadataService } from './metadata/service.js';
import type { AdvisorService } from './advisor/service.js';
import type { TypeGenerator } from './database/typegen.js';
import type { McpUsage } from './mcp/usage.js';
import type { AgentDocs } from './mcp/docs.js';
import type { BackupService } from './admin/backups.js';

export const VERSION: string = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

/**
 * A named probe for GET /api/health?checks=true; `run` throws when the part is down. A
 * required part down makes the answer 503; an optional one (a third-party upstream such as
 * the AI provider or the mail server) is reported without failing readiness, since
 * restarting or removing this instance would not bring it back.
 */
export interface HealthCheck {
  /** May report the part as working but degraded (e.g. a disk nearly full), with figures shown beside the status. */
  run: () => Promise<void | { degraded?: string; info?: Record<string, number | string> }>;
  required: boolean;
  /** Shown beside the status, e.g. the database engine. */
  info?: Record<string, string>;
}

/** Everything the app needs, built once by the composition root and passed down. */
export interface Deps {
  config: Readonly<Config>;
  version: string;
  /** Plinth's own connection (the superuser on the embedded server): its services and migrations. */
  db: Db;
  /** The owner role's pool (not a superuser): admin SQL, table DDL, records, RPC, realtime checks (docs/database.md). */
  owner: Owner;
  credentials: Credentials;
  tokens: TokenSigner;
  identity: IdentityResolver;
  /** The AI gateway (AI_BASE_URL); every call answers 503 when it is not configured. */
  ai: AiGateway;
  /** Email delivery (SMTP_URL), or the log in development. */
  mailer: Mailer;
  auth: AuthService;
  /** What admins see and change of a user beyond the user (sessions, identities, name, verified). */
  userAdmin: UserAdmin;
  /** Sign-in with OpenID Connect providers and GitHub (OAUTH_PROVIDERS), identities. */
  oauth: OAuthService;
  /** Shared counters for rate limits across instances (REDIS_URL), else null. */
  redis: Redis | null;
  healthChecks: Record<string, HealthCheck>;
  /** Buckets and objects (local disk or S3). */
  storage: StorageService;
  /** Resumable (tus) uploads into storage, and their periodic sweep. */
  resumable: ResumableUploads;
  /** Image transforms on download, with their rendition cache. */
  images: ImageTransforms;
  /** Records API (as the caller, RLS applies) and table management over schema public. */
  records: RecordsService;
  tables: TablesService;
  /** The app's versioned migrations, applied as the owner role. */
  migrations: MigrationsService;
  /** Functions: admin CRUD, secrets, logs and invocation through the Deno runtime. */
  functions: FunctionService;
  /** The log store (docs/logs.md): `logs.write(source, level, message, fields)` from any area. */
  logs: LogsService;
  /** Prometheus metrics at GET /metrics (docs/metrics.md); `metrics.setJobQueueDepth` is the jobs area's hook. */
  metrics: Metrics;
  /** Usage over time for the overview's charts (GET /api/metrics/history, docs/metrics.md). */
  usageHistory: UsageHistory;
  /** The job queue (pg-boss on the app's Postgres); null on PGlite. */
  jobs: Jobs | null;
  /** Schedules: cron runs of a function, an HTTP request or SQL (docs/schedules.md). */
  schedules: ScheduleService;
  /** The email API (send-raw) and the templates of the auth emails (docs/email.md). */
  email: EmailService;
  /** Database webhooks: signed deliveries of table changes from a durable outbox (docs/webhooks.md). */
  webhooks: WebhookService;
  /** The OUTBOUND_ALLOW_HOSTS policy every outbound request (schedules, webhooks) follows. */
  outbound: OutboundPolicy;
  /** GET /api/metadata: the backend in one call, from one section per area. */
  metadata: MetadataService;
  /** The security and performance advisor (its private-URL rule reads functions and schedules). */
  advisor: AdvisorService;
  /** The `Database` TypeScript types of schema public (Supabase's format). */
  typegen: TypeGenerator;
  /** MCP tool calls per tool (Plinth's MCP server and InsForge's reporting in). */
  mcpUsage: McpUsage;
  /** The docs for agents (/llms.txt, /api/docs, the MCP fetch-docs tool). */
  agentDocs: AgentDocs;
  /** Backups of the embedded server: streamed, or kept in BACKUP_DIR (docs/database.md). */
  backups: BackupService;
  /** Set only when this start generated the admin key: main prints it once. */
  generatedAdminKey: string | null;
  /** Stops everything this root started, in reverse order. */
  close(): Promise<void>;
}

/** Lifecycle lines of the embedded Postgres (started, restarted, carried over), as JSON log lines. */
function dbEvents(config: Readonly<Config>) {
  const LEVELS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };
  const min = LEVELS[config.logLevel] ?? 30;
  return (event: string, detail: Record<string, unknown>) => {
    // An unexpected exit of postgres is a warning; starts, stops and the carry-over are info.
    const level = /unexpectedly|orphaned|could not/.test(event) ? 40 : 30;
    if (level < min) return;
    process.stderr.write(`${JSON.stringify({ level, time: Date.now(), msg: `database: ${event}`, ...detail })}\n`);
  };
}

/**
 * What the embedded server logs (its stderr, read into the log store): slow statements past
 * LOG_SLOW_STATEMENT_MS without their bind values, and errors without the failing statement's
 * text (admin SQL may carry secrets).
 */
function embeddedLogSettings(config: Readonly<Config>): Record<string, string> {
  return {
    log_min_duration_statement: String(config.logs.slowStatementMs),
    log_parameter_max_length: '0',
    log_min_error_statement: 'panic',
    log_line_prefix: '%m [%p] ',
  };
}

/** The database handed in (tests), or the configured one; `onLog` hears the embedded server's log. */
async function givenOrOpened(config: Readonly<Config>, opts: { db?: Db; engine?: DbEngine }, onLog: (line: string) => void): Promise<{ db: Db; engine: DbEngine }> {
  if (opts.db) return { db: opts.db, engine: opts.engine ?? (opts.db.kind === 'pglite' ? 'pglite' : 'postgres') };
  return openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, onEvent: dbEvents(config), embedded: { settings: embeddedLogSettings(config), onLog } });
}

/** The log store and the metrics over it and the pool; the log is written before the database closes. */
function observability(config: Readonly<Config>, db: Db, closers: Array<() => Promise<unknown>>): { logs: LogsService; metrics: Metrics; pools: Db[] } {
  const warn = dbEvents(config);
  const logs = new LogsService(db, { ...config.logs, onError: (err) => warn('could not write log lines to the store (they are dropped)', { error: String(err) }) });
  closers.push(() => logs.close());
  // The pool metrics add up every pool: Plinth's own, and the owner role's (records, admin SQL) once it opens.
  const pools: Db[] = [db];
  const metrics = new Metrics({ pool: () => sumPoolStats(pools), logs: () => logs.state() });
  return { logs, metrics, pools };
}

/** Optional in health: a log store that cannot write drops lines, never requests. */
function logsCheck(config: Readonly<Config>, logs: LogsService): HealthCheck {
  return {
    run: async () => {
      const failed = logs.state().lastError;
      if (failed) throw new Error(failed);
    },
    required: false,
    info: { engine: config.logs.store ? 'system.logs' : 'off' },
  };
}

/** The functions service, its invocations heard by the log (source functions) and the metrics. */
function startFunctions(config: Readonly<Config>, db: Db, o: { logs: LogsService; metrics: Metrics; tokens: TokenSigner }, closers: Array<() => Promise<unknown>>): FunctionService {
  const functions = buildFunctions(config, db, undefined, o.logs);
  functions.credentialFor = functionCredentials(o.tokens);
  functions.onInvoke = ({ seconds, ...inv }) => {
    const ok = inv.status !== null && inv.status < 500;
    o.metrics.observeInvocation(inv.cold, ok, seconds);
    o.logs.write('functions', ok ? 'info' : 'error', `invoked ${inv.slug}: ${inv.status ?? inv.error}`, { ...inv, durationMs: Math.round(seconds * 1e5) / 100 });
  };
  closers.push(() => functions.close());
  return functions;
}

/** The configured database: the embedded Postgres by default, DATABASE_URL, or pglite://. */
export async function openDb(config: Readonly<Config>, onEvent: (event: string, detail: Record<string, unknown>) => void = dbEvents(config)): Promise<Db> {
  return (await openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, onEvent })).db;
}

/**
 * Redis for counters (and realtime's adapter). Down later: ioredis reconnects by itself;
 * meanwhile commands fail at once (no offline queue), rate limits fail open and health
 * reports it. Not an unhandled error event.
 */
async function connectRedis(url: string): Promise<Redis> {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false });
  r.on('error', () => {});
  await r.connect();
  return r;
}

/**
 * Storage, with its metadata cache listening where this process owns the database (the
 * embedded server); a server Postgres may be shared by several instances (cache.ts).
 */
async function startStorage(config: Readonly<Config>, opened: { db: Db; engine: DbEngine }, jwtSecret: string, closers: Array<() => Promise<unknown>>) {
  const storage = createStorage(config, opened.db, jwtSecret);
  // Resumable uploads sweep their expired leftovers in this process: they are on this instance's disk.
  const resumable = createResumable(config, storage);
  resumable.start();
  closers.push(async () => resumable.stop());
  closers.push(async () => storage.driver.close?.());
  if (opened.engine === 'embedded') {
    await storage.cache.start(opened.db);
    closers.push(() => storage.cache.stop());
  }
  return { storage, resumable, images: createImages(config) };
}

/** The owner role's pool (src/db/owner.ts), closed with the rest when it is a pool of its own. */
async function ownerPool(db: Db, closers: Array<() => Promise<unknown>>, pools: Db[]): Promise<Owner> {
  const owner = await openOwner(db);
  if (owner.separate) closers.push(() => owner.db.close());
  if (owner.separate) pools.push(owner.db);
  return owner;
}

/** The auth service (audited into the log store), its brute-force guard shared through Redis when there is one. */
function buildAuth(
  config: Readonly<Config>,
  p: { db: Db; tokens: TokenSigner; mailer: Mailer; redis: Redis | null; email: EmailService; logs: LogsService; secret: string },
): AuthService {
  const counter = p.redis ? new FallbackCounter(new RedisCounter(p.redis, 'plinth-auth:'), new MemoryCounter()) : new MemoryCounter();
  return new AuditedAuthService(
    {
      templates: (purpose, vars) => p.email.templates.forPurpose(purpose, vars),
      db: p.db,
      tokens: p.tokens,
      mailer: p.email.authMailer,
      guard: new AuthGuard(counter),
      codes: new EmailCodes(p.secret),
      refreshTtlSeconds: config.auth.refreshTokenTtlSeconds,
      requireEmailVerification: config.auth.requireEmailVerification,
      anonymousSignIn: config.auth.anonymousSignIn,
      secret: p.secret,
      redirectUrls: config.auth.oauth.redirectUrls,
    },
    p.logs,
  );
}

/** The composition root: opens the database, migrates, loads credentials, builds services. */
export async function buildDeps(config: Readonly<Config>, opts: { db?: Db; engine?: DbEngine } = {}): Promise<Deps> {
  const closers: Array<() => Promise<unknown>> = [];
  const close = async () => {
    for (const c of closers.reverse()) await c().catch(() => {});
  };
  try {
    let pgLog: ((line: string) => void) | null = null; // the server's lines before the store exists are not kept
    const opened = await givenOrOpened(config, opts, (line) => pgLog?.(line));
    const db = opened.db;
    closers.push(() => db.close());
    await migrate(db);
    const { logs, metrics, pools } = observability(config, db, closers);
    pgLog = postgresLogSink(logs);
    const owner = await ownerPool(db, closers, pools);
    const { credentials, generatedAdminKey } = await loadCredentials(db, config.credentials);
    const tokens = new TokenSigner(credentials.jwtSecret, config.auth.tokenTtlSeconds);
    const identity = new IdentityResolver(credentials, tokens, dbSessionCheck(db));
    const redis = config.rateLimit.redisUrl ? await connectRedis(config.rateLimit.redisUrl) : null;
    if (redis) closers.push(() => redis.quit());
    const healthChecks: Record<string, HealthCheck> = {
      database: { run: async () => void (await db.query('select 1')), required: true, info: { engine: opened.engine } },
    };
    const schema = new SchemaCache(db);
    const records = new RecordsService(owner.db, schema, config.dbSchemas);
    const tables = new TablesService(owner.db, schema);
    // Optional: without Redis this instance still serves (limits fail open, docs/decisions.md).
    if (redis) healthChecks.redis = { run: async () => void (await redis!.ping()), required: false };
    const { storage, resumable, images } = await startStorage(config, opened, credentials.jwtSecret, closers);
    healthChecks.storage = { run: () => storage.driver.check(), required: true };
    if (opened.engine !== 'postgres' || !config.storage.s3) healthChecks.disk = { required: true, run: () => dataDirHealth(config.dataDir, config.diskLowBytes) };
    const mailer = createMailer(config.auth.smtpUrl, config.auth.mailFrom);
    closers.push(() => mailer.close());
    if (mailer instanceof SmtpMailer) healthChecks.smtp = { run: () => mailer.verify(), required: false };
    const email = buildEmail(config, db, mailer, redis);
    const auth = buildAuth(config, { db, tokens, mailer, redis, email, logs, secret: credentials.jwtSecret });
    const oauth = new OAuthService({ db, auth, config: config.auth.oauth, publicUrl: config.publicUrl, logs });
    const ai = createAiGateway(config.ai, db, (u) => metrics.countAiTokens(u.promptTokens, u.completionTokens));
    closers.push(() => ai.close());
    if (ai.configured) healthChecks.ai = { run: () => ai.ping(), required: false };
    const functions = startFunctions(config, db, { logs, metrics, tokens }, closers);
    healthChecks.logs = logsCheck(config, logs);
    healthChecks.functions = { run: () => functions.runtime.check(), required: true };
    const automation = await startAutomation(config, db, { functions, email, logs, metrics, ownerDb: owner.db }, closers, healthChecks);
    const ops = operations(config, db, { oauth, auth, functions, schedules: automation.schedules, logs }, VERSION, closers);
    return {
      config, version: VERSION, db, owner,
      credentials,
      tokens,
      identity,
      ai,
      mailer,
      auth,
      userAdmin: new UserAdmin(db, logs),
      oauth,
      redis,
      healthChecks,
      storage,
      resumable,
      images,
      records,
      tables,
      migrations: new MigrationsService(owner.db, schema),
      functions,
      logs,
      metrics,
      ...automation,
      email,
      ...ops,
      generatedAdminKey,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
