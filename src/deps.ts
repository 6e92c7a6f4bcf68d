import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import type { Config } from './config/index.js';
import type { Db } from './db/types.js';
import { openDatabase, type DbEngine } from './db/open.js';
import { migrate } from './db/migrate.js';
import { loadCredentials, type Credentials } from './auth/credentials.js';
import { TokenSigner } from './auth/tokens.js';
import { IdentityResolver, dbSessionCheck } from './auth/identity.js';
import { createStorage, type StorageService } from './storage/index.js';
import { SchemaCache } from './database/schema.js';
import { RecordsService } from './database/records.js';
import { TablesService } from './database/tables.js';
import { createAiGateway, type AiGateway } from './ai/index.js';
import { createMailer, SmtpMailer, type Mailer } from './auth/mailer.js';
import { AuthGuard } from './auth/guard.js';
import { FallbackCounter, MemoryCounter, RedisCounter } from './lib/counter.js';
import { EmailCodes } from './auth/codes.js';
import { AuthService } from './auth/service.js';
import { OAuthService } from './auth/oauth/index.js';
import { buildFunctions, type FunctionService } from './functions/index.js';
import { TypeGenerator } from './database/typegen.js';
import { McpUsage } from './mcp/usage.js';
import { AgentDocs } from './mcp/docs.js';
import { loadDocBundle } from './mcp/docs-bundle.js';

export const VERSION: string = JSON.parse(
  readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
).version;

/**
 * A named probe for GET /api/health?checks=true; `run` throws when the part is down. A
 * required part down makes the answer 503; an optional one (a third-party upstream such as
 * the AI provider or the mail server) is reported without failing readiness, since
 * restarting or removing this instance would not bring it back.
 */
export interface HealthCheck {
  run: () => Promise<void>;
  required: boolean;
  /** Shown beside the status, e.g. the database engine. */
  info?: Record<string, string>;
}

/** Everything the app needs, built once by the composition root and passed down. */
export interface Deps {
  config: Readonly<Config>;
  version: string;
  db: Db;
  credentials: Credentials;
  tokens: TokenSigner;
  identity: IdentityResolver;
  /** The AI gateway (AI_BASE_URL); every call answers 503 when it is not configured. */
  ai: AiGateway;
  /** Email delivery (SMTP_URL), or the log in development. */
  mailer: Mailer;
  auth: AuthService;
  /** Sign-in with OpenID Connect providers and GitHub (OAUTH_PROVIDERS), identities. */
  oauth: OAuthService;
  /** Shared counters for rate limits across instances (REDIS_URL), else null. */
  redis: Redis | null;
  healthChecks: Record<string, HealthCheck>;
  /** Buckets and objects (local disk or S3). */
  storage: StorageService;
  /** Records API (as the caller, RLS applies) and table management over schema public. */
  records: RecordsService;
  tables: TablesService;
  /** Functions: admin CRUD, secrets, logs and invocation through the Deno runtime. */
  functions: FunctionService;
  /** The `Database` TypeScript types of schema public (Supabase's format). */
  typegen: TypeGenerator;
  /** MCP tool calls per tool (Plinth's MCP server and InsForge's reporting in). */
  mcpUsage: McpUsage;
  /** The docs for agents (/llms.txt, /api/docs, the MCP fetch-docs tool). */
  agentDocs: AgentDocs;
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

/** The database handed in (tests), or the configured one. */
async function givenOrOpened(config: Readonly<Config>, opts: { db?: Db; engine?: DbEngine }): Promise<{ db: Db; engine: DbEngine }> {
  if (opts.db) return { db: opts.db, engine: opts.engine ?? (opts.db.kind === 'pglite' ? 'pglite' : 'postgres') };
  return openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, onEvent: dbEvents(config) });
}

/** The configured database: the embedded Postgres by default, DATABASE_URL, or pglite://. */
export async function openDb(config: Readonly<Config>): Promise<Db> {
  return (await openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, onEvent: dbEvents(config) })).db;
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
async function startStorage(config: Readonly<Config>, opened: { db: Db; engine: DbEngine }, jwtSecret: string, closers: Array<() => Promise<unknown>>): Promise<StorageService> {
  const storage = createStorage(config, opened.db, jwtSecret);
  closers.push(async () => storage.driver.close?.());
  if (opened.engine === 'embedded') {
    await storage.cache.start(opened.db);
    closers.push(() => storage.cache.stop());
  }
  return storage;
}

/** The composition root: opens the database, migrates, loads credentials, builds services. */
export async function buildDeps(config: Readonly<Config>, opts: { db?: Db; engine?: DbEngine } = {}): Promise<Deps> {
  const closers: Array<() => Promise<unknown>> = [];
  const close = async () => {
    for (const c of closers.reverse()) await c().catch(() => {});
  };
  try {
    const opened = await givenOrOpened(config, opts);
    const db = opened.db;
    closers.push(() => db.close());
    await migrate(db);
    const { credentials, generatedAdminKey } = await loadCredentials(db, config.credentials);
    const tokens = new TokenSigner(credentials.jwtSecret, config.auth.tokenTtlSeconds);
    const identity = new IdentityResolver(credentials, tokens, dbSessionCheck(db));
    const redis = config.rateLimit.redisUrl ? await connectRedis(config.rateLimit.redisUrl) : null;
    if (redis) closers.push(() => redis.quit());
    const healthChecks: Record<string, HealthCheck> = {
      database: {
        run: async () => {
          await db.query('select 1');
        },
        required: true,
        info: { engine: opened.engine },
      },
    };
    const schema = new SchemaCache(db);
    const records = new RecordsService(db, schema);
    const tables = new TablesService(db, schema);
    // Optional: without Redis this instance still serves (limits fail open, docs/decisions.md).
    if (redis) healthChecks.redis = { run: async () => void (await redis!.ping()), required: false };
    const storage = await startStorage(config, opened, credentials.jwtSecret, closers);
    healthChecks.storage = { run: () => storage.driver.check(), required: true };
    const mailer = createMailer(config.auth.smtpUrl, config.auth.mailFrom);
    closers.push(() => mailer.close());
    if (mailer instanceof SmtpMailer) healthChecks.smtp = { run: () => mailer.verify(), required: false };
    const auth = new AuthService({
      db,
      tokens,
      mailer,
      guard: new AuthGuard(redis ? new FallbackCounter(new RedisCounter(redis, 'plinth-auth:'), new MemoryCounter()) : new MemoryCounter()),
      codes: new EmailCodes(credentials.jwtSecret),
      refreshTtlSeconds: config.auth.refreshTokenTtlSeconds,
      requireEmailVerification: config.auth.requireEmailVerification,
    });
    const oauth = new OAuthService({ db, auth, config: config.auth.oauth, publicUrl: config.publicUrl });
    const ai = createAiGateway(config.ai, db);
    closers.push(() => ai.close());
    if (ai.configured) healthChecks.ai = { run: () => ai.ping(), required: false };
    const functions = buildFunctions(config, db);
    closers.push(() => functions.close());
    healthChecks.functions = { run: () => functions.runtime.check(), required: true };
    const mcpUsage = new McpUsage(db);
    closers.push(() => mcpUsage.flush());
    return {
      config,
      version: VERSION,
      db,
      credentials,
      tokens,
      identity,
      ai,
      mailer,
      auth,
      oauth,
      redis,
      healthChecks,
      storage,
      records,
      tables,
      functions,
      typegen: new TypeGenerator(db),
      mcpUsage,
      agentDocs: new AgentDocs(loadDocBundle()),
      generatedAdminKey,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
