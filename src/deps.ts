import { VERSION } from './version.js';
import type { Redis } from 'ioredis';
import type { Config } from './config/index.js';
import type { Db } from './db/types.js';
import type { DbEngine } from './db/open.js';
import { givenOrOpened } from './db/configured.js';
import { dbEvents, type LaunchedEmbedded } from './db/launch.js';
import { migrate } from './db/migrate.js';
import { openOwner, type Owner } from './db/owner.js';
import { loadCredentials, type Credentials } from './auth/credentials.js';
import { TokenSigner, functionCredentials } from './auth/tokens.js';
import { IdentityResolver, dbSessionCheck } from './auth/identity.js';
import {
  createImages,
  createResumable,
  createStorage,
  type ImageTransforms,
  type ResumableUploads,
  type StorageService,
} from './storage/index.js';
import { SchemaCache } from './database/schema.js';
import { RecordsService } from './database/records.js';
import { TablesService } from './database/tables.js';
import { MigrationsService, migrationsKey } from './database/migrations/service.js';
import { createAiGateway, type AiGateway } from './ai/index.js';
import { createMailer, SmtpMailer, type Mailer } from './auth/mailer.js';
import type { AuthService } from './auth/service.js';
import { createAuth } from './auth/create.js';
import { OAuthService } from './auth/oauth/index.js';
import { buildFunctions, type FunctionService } from './functions/index.js';
import { CountedInvocations, invocationRecord } from './functions/invocation.js';
import { dataDirHealth } from './lib/disk.js';
import { connectRedis } from './lib/redis.js';
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
import { type LineSink, processLog } from './lib/process-log.js';
import { operations } from './operations.js';
import type { MetadataService } from './metadata/service.js';
import type { AdvisorService } from './advisor/service.js';
import type { TypeGenerator } from './database/typegen.js';
import type { McpUsage } from './mcp/usage.js';
import type { AgentDocs } from './mcp/docs.js';
import type { BackupService } from './admin/backups.js';
import type { HealthCheck } from './lib/health.js';
import { type Lifecycle, Lifetime } from './lib/lifecycle.js';

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
  /** The probes of GET /api/health?checks=true, by name. */
  healthChecks: Readonly<Record<string, HealthCheck>>;
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

/** The log store and the metrics over it and the pool; the log is written before the database closes. */
function observability(
  config: Readonly<Config>,
  db: Db,
  life: Lifecycle,
): { logs: LogsService; metrics: Metrics; pools: Db[] } {
  const warn = dbEvents(config);
  const logs = new LogsService(db, {
    ...config.logs,
    onError: (err) => warn('could not write log lines to the store (they are dropped)', { error: String(err) }),
  });
  life.onClose(() => logs.close());
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
function startFunctions(
  config: Readonly<Config>,
  db: Db,
  o: { logs: LogsService; metrics: Metrics; tokens: TokenSigner; anonKey: string; stdout?: LineSink },
  life: Lifecycle,
): FunctionService {
  // The runtime's warnings (rare): the log store and stdout.
  const warn = (msg: string, extra?: Record<string, unknown>) =>
    void (o.logs.write('functions', 'warn', msg, extra), processLog(config.logLevel, o.stdout)('warn', msg, extra));
  const counted = new CountedInvocations(o.logs);
  const functions = buildFunctions(config, db, {
    warn,
    store: o.logs,
    anonKey: o.anonKey,
    credentialFor: functionCredentials(o.tokens),
    onInvoke: (inv) => {
      const ok = inv.status !== null && inv.status < 500;
      o.metrics.observeInvocation(inv.cold, ok, inv.seconds);
      // A warm HTTP call below 500 is counted into a line a minute; its api line is its own.
      if (counted.add(inv)) return;
      // The line is built when its batch is written: the call only appends (docs/architecture.md).
      const time = Date.now();
      o.logs.defer(() => invocationRecord(time, ok, inv));
    },
  });
  life.onClose(() => functions.close());
  return functions;
}

/**
 * Storage, with its metadata cache listening where this process owns the database (the
 * embedded server); a server Postgres may be shared by several instances (cache.ts).
 */
async function startStorage(
  config: Readonly<Config>,
  opened: { db: Db; engine: DbEngine },
  jwtSecret: string,
  life: Lifecycle,
) {
  const storage = await createStorage(config, opened.db, jwtSecret);
  // Resumable uploads sweep their expired leftovers in this process: they are on this instance's disk.
  const resumable = createResumable(config, storage);
  resumable.start();
  life.onClose(async () => resumable.stop());
  life.onClose(async () => storage.driver.close?.());
  if (opened.engine === 'embedded') {
    await storage.cache.start(opened.db);
    life.onClose(() => storage.cache.stop());
  }
  const images = createImages(config);
  life.onClose(() => images.close()); // its render processes end with the server
  return { storage, resumable, images };
}

/** The owner role's pool (src/db/owner.ts), closed with the rest when it is a pool of its own. */
async function ownerPool(db: Db, life: Lifecycle, pools: Db[]): Promise<Owner> {
  const owner = await openOwner(db);
  if (owner.separate) life.onClose(() => owner.db.close());
  if (owner.separate) pools.push(owner.db);
  if (owner.db.callers) pools.push(owner.db.callers);
  return owner;
}

/** The database migrated, the log store and metrics on it, the owner pool, credentials and Redis. */
async function foundation(
  config: Readonly<Config>,
  opts: { db?: Db; engine?: DbEngine; launched?: LaunchedEmbedded | null },
  life: Lifecycle,
) {
  let pgLog: ((line: string) => void) | null = null; // the server's lines before the store exists are not kept
  const opened = await givenOrOpened(config, opts, (line) => pgLog?.(line));
  const db = opened.db;
  life.onClose(() => db.close());
  await migrate(db);
  const { logs, metrics, pools } = observability(config, db, life);
  pgLog = postgresLogSink(logs);
  const owner = await ownerPool(db, life, pools);
  const { credentials, generatedAdminKey } = await loadCredentials(db, config.credentials);
  const tokens = new TokenSigner(credentials.jwtSecret, config.auth.tokenTtlSeconds);
  const identity = new IdentityResolver(credentials, tokens, dbSessionCheck(db));
  const redis = config.rateLimit.redisUrl ? await connectRedis(config.rateLimit.redisUrl) : null;
  if (redis) life.onClose(() => redis.quit());
  life.health('database', {
    run: async () => void (await db.query('select 1')),
    required: true,
    info: { engine: opened.engine },
  });
  // Optional: without Redis this instance still serves (limits fail open, docs/decisions.md).
  if (redis) life.health('redis', { run: async () => void (await redis.ping()), required: false });
  return { opened, db, logs, metrics, owner, credentials, generatedAdminKey, tokens, identity, redis };
}

/** The composition root: opens the database, migrates, loads credentials, builds services. */
/**
 * `opts.stdout`: where lines an operator must see go (main.ts's log destination; default stdout);
 * `opts.launched`: the embedded cluster main.ts launched before loading this code (db/launch.ts).
 */
export async function buildDeps(
  config: Readonly<Config>,
  opts: { db?: Db; engine?: DbEngine; stdout?: LineSink; launched?: LaunchedEmbedded | null } = {},
): Promise<Deps> {
  const life = new Lifetime();
  const close = () => life.close();
  try {
    const { opened, ...base } = await foundation(config, opts, life);
    const { db, logs, metrics, owner, credentials, tokens, redis } = base;
    const schema = new SchemaCache(db);
    const { storage, resumable, images } = await startStorage(config, opened, credentials.jwtSecret, life);
    life.health('storage', { run: () => storage.driver.check(), required: true });
    if (opened.engine !== 'postgres' || !config.storage.s3)
      life.health('disk', { required: true, run: () => dataDirHealth(config.dataDir, config.diskLowBytes) });
    const mailer = createMailer(config.auth.smtpUrl, config.auth.mailFrom);
    life.onClose(() => mailer.close());
    if (mailer instanceof SmtpMailer) life.health('smtp', { run: () => mailer.verify(), required: false });
    const email = buildEmail(config, db, mailer, redis);
    const auth = createAuth(config, { db, tokens, redis, email, logs, secret: credentials.jwtSecret }, owner.db);
    const oauth = new OAuthService({ db, auth, config: config.auth.oauth, publicUrl: config.publicUrl, logs });
    const ai = createAiGateway(config.ai, db, (u) => metrics.countAiTokens(u.promptTokens, u.completionTokens));
    life.onClose(() => ai.close());
    if (ai.configured) life.health('ai', { run: () => ai.ping(), required: false });
    const fnDeps = { logs, metrics, tokens, anonKey: credentials.anonKey, stdout: opts.stdout };
    const functions = startFunctions(config, db, fnDeps, life);
    life.health('logs', logsCheck(config, logs));
    life.health('functions', { run: () => functions.runtime.check(), required: true });
    const automation = await startAutomation(
      config,
      db,
      { functions, email, logs, metrics, ownerDb: owner.db, flushAiUsage: () => ai.flush(), stdout: opts.stdout },
      life,
    );
    const ops = operations(
      config,
      db,
      owner.db,
      { oauth, auth, functions, schedules: automation.schedules, logs },
      VERSION,
      life,
    );
    return {
      ...base,
      config,
      version: VERSION,
      ai,
      mailer,
      auth,
      userAdmin: new UserAdmin(db, logs),
      oauth,
      storage,
      resumable,
      images,
      records: new RecordsService(owner.db, schema, config.dbSchemas),
      tables: new TablesService(owner.db, schema),
      migrations: new MigrationsService(owner.db, schema, migrationsKey(db)),
      functions,
      ...automation,
      email,
      ...ops,
      healthChecks: life.checks,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
