import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseDotenv } from 'dotenv';
import { readOAuth, type OAuthConfig } from './oauth.js';
import { readAutomation, type AutomationConfig } from './automation.js';
import { readFunctionPackages, type FunctionPackagesConfig } from './packages.js';
import { bool, int, list, oneOf, optInt, raw, secret, str, url, type Env, type Reader } from './reader.js';
import { variablesOf, type ConfigVariable } from './effective.js';
import { withSecretFiles } from './secret-files.js';

/** The whole configuration: parsed once at start, validated fully, frozen, then injected. */
export interface Config {
  port: number;
  host: string;
  publicUrl: string | null;
  dataDir: string;
  /** Backups kept on the server: their folder (BACKUP_DIR, default DATA_DIR/backups) and how many ready ones stay (BACKUP_KEEP). */
  backups: { dir: string; keep: number };
  /** Below this much free space under DATA_DIR, health reports the disk as degraded (DISK_LOW_MB). */
  diskLowBytes: number;
  databaseUrl: string | null;
  logLevel: string;
  trustProxy: boolean;
  bodyLimitBytes: number;
  corsOrigins: string[] | null;
  /** `DB_SCHEMAS`: the schemas /api/db and the records paths expose (Accept-/Content-Profile); public always, first. */
  dbSchemas: string[];
  credentials: { adminApiKey: string | null; anonKey: string | null; jwtSecret: string | null };
  auth: {
    tokenTtlSeconds: number;
    refreshTokenTtlSeconds: number;
    requireEmailVerification: boolean;
    /** POST /api/auth/signin/anonymous is open (off by default: it hands the authenticated role to anyone). */
    anonymousSignIn: boolean;
    smtpUrl: string | null;
    mailFrom: string;
    /** Sign-in with OpenID Connect providers and GitHub (docs/auth.md). */
    oauth: OAuthConfig;
  };
  /** `adminPerMinute`: the admin key's own limit (RATE_LIMIT_ADMIN_PER_MINUTE). */
  rateLimit: { plan: RateLimitPlan; perMinute: number; adminPerMinute: number; redisUrl: string | null };
  /** Per-connection limits of the realtime server (docs/realtime.md). */
  realtime: {
    maxSubscriptions: number;
    messagesPerSecond: number;
    maxPayloadBytes: number;
    maxBufferBytes: number;
  };
  storage: {
    maxUploadBytes: number;
    /** An unfinished resumable (tus) upload is removed this long after it was created. */
    resumableExpirySeconds: number;
    /** Image transforms on download (docs/storage.md). */
    images: {
      maxInputPixels: number;
      maxInputBytes: number;
      cacheBytes: number;
      maxOutputPixels: number;
      maxAvifPixels: number;
      concurrentRenders: number;
      renderQueue: number;
      renderSeconds: number;
    };
    s3: null | {
      bucket: string;
      endpoint: string | null;
      region: string;
      accessKeyId: string | null;
      secretAccessKey: string | null;
      forcePathStyle: boolean;
    };
  };
  functions: {
    runtimeUrl: string | null;
    /** Shared secret between Plinth and a remote runtime (sent as a bearer token). */
    runtimeToken: string | null;
    timeoutMs: number;
    memoryMb: number;
    /** Package imports resolved at deploy (config/packages.ts). */
    packages: FunctionPackagesConfig;
  };
  /** The log store and metrics (docs/logs.md, docs/metrics.md). */
  logs: {
    /** Lines also go to the store in Postgres (stdout always gets them). */
    store: boolean;
    retentionDays: number;
    maxRows: number;
    /** The embedded Postgres logs statements slower than this (log_min_duration_statement); -1 off. */
    slowStatementMs: number;
    /** One sample of usage over time per this many seconds (USAGE_SAMPLE_SECONDS, docs/metrics.md). */
    usageSampleSeconds: number;
  };
  metricsToken: string | null;
  ai: {
    baseUrl: string | null;
    apiKey: string | null;
    models: string[] | null;
    defaultModel: string | null;
    allowAnon: boolean;
    userDailyTokens: number | null;
    timeoutMs: number;
  };
  /** Schedules, database webhooks, email, the job queue (config/automation.ts). */
  automation: AutomationConfig;
  /** The MCP server at /api/mcp (docs/mcp.md). */
  mcp: { maxSessions: number; sessionIdleSeconds: number };
  /** Every variable read above, where it came from, secrets masked (config/effective.ts). */
  variables: ConfigVariable[];
}

export type RateLimitPlan = 'free' | 'pro' | 'enterprise' | 'off';

/** Raised when the environment is invalid; `problems` lists every bad key at once. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const MIB = 1024 * 1024;

/** Parses and validates `env`. Throws ConfigError naming every problem at once. */
export function loadConfig(env: Env): Readonly<Config> {
  const problems: string[] = [];
  const resolved = withSecretFiles(env, problems);
  const r: Reader = { problems, env: resolved.env, read: new Map() };
  const config: Config = {
    port: int(r, 'PORT', 7130, 0, 65535),
    host: str(r, 'HOST', '0.0.0.0'),
    publicUrl: url(r, 'PUBLIC_URL', ['http:', 'https:']),
    dataDir: str(r, 'DATA_DIR', './data'),
    backups: {
      dir: str(r, 'BACKUP_DIR', path.join(str(r, 'DATA_DIR', './data'), 'backups')),
      keep: int(r, 'BACKUP_KEEP', 7, 1, 1000),
    },
    diskLowBytes: int(r, 'DISK_LOW_MB', 1024, 0, 100_000_000) * MIB,
    databaseUrl: url(r, 'DATABASE_URL', ['postgres:', 'postgresql:', 'pglite:']),
    logLevel: oneOf(r, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    trustProxy: bool(r, 'TRUST_PROXY', false),
    bodyLimitBytes: int(r, 'BODY_LIMIT_BYTES', MIB, 1024, 100 * MIB),
    corsOrigins: list(r, 'CORS_ORIGINS'),
    dbSchemas: schemas(r),
    credentials: {
      adminApiKey: secret(r, 'ADMIN_API_KEY', /^ik_[A-Za-z0-9]{32,128}$/, '"ik_" followed by 32-128 letters or digits'),
      anonKey: secret(r, 'ANON_KEY', /^anon_[A-Za-z0-9]{32,128}$/, '"anon_" followed by 32-128 letters or digits'),
      jwtSecret: secret(r, 'JWT_SECRET', /^.{32,512}$/, 'at least 32 characters'),
    },
    auth: {
      tokenTtlSeconds: int(r, 'TOKEN_TTL', 900, 30, 86_400),
      refreshTokenTtlSeconds: int(r, 'REFRESH_TOKEN_TTL', 30 * 86_400, 60, 365 * 86_400),
      requireEmailVerification: bool(r, 'REQUIRE_EMAIL_VERIFICATION', false),
      anonymousSignIn: bool(r, 'AUTH_ANONYMOUS_SIGNIN', false),
      smtpUrl: url(r, 'SMTP_URL', ['smtp:', 'smtps:']),
      mailFrom: str(r, 'MAIL_FROM', 'Plinth <no-reply@localhost>'),
      oauth: readOAuth(r),
    },
    rateLimit: readRateLimit(r),
    realtime: {
      maxSubscriptions: int(r, 'REALTIME_MAX_SUBSCRIPTIONS', 100, 1, 100_000),
      messagesPerSecond: int(r, 'REALTIME_MESSAGES_PER_SECOND', 50, 1, 1_000_000),
      maxPayloadBytes: int(r, 'REALTIME_MAX_PAYLOAD_BYTES', 64 * 1024, 256, 16 * MIB),
      maxBufferBytes: int(r, 'REALTIME_MAX_BUFFER_BYTES', 4 * MIB, 64 * 1024, 1024 * MIB),
    },
    storage: {
      maxUploadBytes: int(r, 'MAX_UPLOAD_BYTES', 100 * MIB, 1, 1024 * 1024 * MIB),
      resumableExpirySeconds: int(r, 'RESUMABLE_UPLOAD_EXPIRY_SECONDS', 24 * 3600, 1, 30 * 24 * 3600),
      images: readImages(r),
      s3: readS3(r),
    },
    functions: readFunctions(r, str(r, 'DATA_DIR', './data')),
    logs: {
      store: bool(r, 'LOGS_STORE', true),
      retentionDays: int(r, 'LOGS_RETENTION_DAYS', 7, 1, 3650),
      maxRows: int(r, 'LOGS_MAX_ROWS', 1_000_000, 1000, 1_000_000_000),
      slowStatementMs: slowMs(r),
      usageSampleSeconds: int(r, 'USAGE_SAMPLE_SECONDS', 300, 1, 86_400),
    },
    metricsToken: printableToken(r, 'METRICS_TOKEN'),
    ai: {
      baseUrl: url(r, 'AI_BASE_URL', ['http:', 'https:']),
      apiKey: str(r, 'AI_API_KEY'),
      models: list(r, 'AI_MODELS'),
      defaultModel: str(r, 'AI_DEFAULT_MODEL'),
      allowAnon: bool(r, 'AI_ALLOW_ANON', false),
      userDailyTokens: optInt(r, 'AI_USER_DAILY_TOKENS', 1, 1_000_000_000_000),
      timeoutMs: int(r, 'AI_TIMEOUT_MS', 60_000, 100, 15 * 60_000),
    },
    automation: readAutomation(r),
    mcp: {
      maxSessions: int(r, 'MCP_MAX_SESSIONS', 1000, 1, 100_000),
      sessionIdleSeconds: int(r, 'MCP_SESSION_IDLE_SECONDS', 1800, 10, 7 * 86_400),
    },
    variables: [], // filled below, once every key has been read
  };
  for (const key of resolved.files) r.read.set(key, null);
  config.variables = variablesOf(r);
  if (r.problems.length) throw new ConfigError(r.problems);
  return deepFreeze(config);
}

function readRateLimit(r: Reader): Config['rateLimit'] {
  const plan = oneOf(r, 'RATE_LIMIT_PLAN', ['free', 'pro', 'enterprise', 'off'] as const, 'free');
  if (plan === 'enterprise' && raw(r, 'RATE_LIMIT_PER_MINUTE') === undefined) {
    r.problems.push('RATE_LIMIT_PER_MINUTE is required when RATE_LIMIT_PLAN=enterprise');
  }
  const perMinute = int(r, 'RATE_LIMIT_PER_MINUTE', plan === 'pro' ? 1000 : 100, 1, 10_000_000);
  return {
    plan,
    perMinute: plan === 'free' ? 100 : plan === 'pro' ? 1000 : perMinute,
    adminPerMinute: int(r, 'RATE_LIMIT_ADMIN_PER_MINUTE', 10_000, 1, 10_000_000),
    redisUrl: url(r, 'REDIS_URL', ['redis:', 'rediss:']),
  };
}

function readS3(r: Reader): Config['storage']['s3'] {
  const bucket = str(r, 'S3_BUCKET');
  const endpoint = url(r, 'S3_ENDPOINT', ['http:', 'https:']);
  const region = str(r, 'S3_REGION', 'us-east-1');
  const accessKeyId = str(r, 'S3_ACCESS_KEY_ID');
  const secretAccessKey = str(r, 'S3_SECRET_ACCESS_KEY');
  const forcePathStyle = bool(r, 'S3_FORCE_PATH_STYLE', false);
  if (!bucket && (endpoint || accessKeyId || secretAccessKey)) {
    r.problems.push('S3_BUCKET is required when other S3_* variables are set');
  }
  if (bucket && !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    r.problems.push('S3_BUCKET must be a valid S3 bucket name (3-63 lower-case letters, digits, dots, hyphens)');
  }
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey)) {
    r.problems.push('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together');
  }
  return bucket ? { bucket, endpoint, region, accessKeyId, secretAccessKey, forcePathStyle } : null;
}

function readFunctions(r: Reader, dataDir: string): Config['functions'] {
  const runtimeToken = str(r, 'FUNCTION_RUNTIME_TOKEN');
  if (runtimeToken !== null && !/^[\x21-\x7e]{16,512}$/.test(runtimeToken)) {
    r.problems.push('FUNCTION_RUNTIME_TOKEN must be 16-512 printable characters without spaces');
  }
  return {
    runtimeUrl: url(r, 'FUNCTION_RUNTIME_URL', ['http:', 'https:']),
    runtimeToken,
    timeoutMs: int(r, 'FUNCTION_TIMEOUT_MS', 30_000, 100, 15 * 60_000),
    memoryMb: int(r, 'FUNCTION_MEMORY_MB', 128, 16, 4096),
    packages: readFunctionPackages(r, dataDir),
  };
}

/** LOG_SLOW_STATEMENT_MS: a whole number of milliseconds, or -1 to log no statement. */
function slowMs(r: Reader): number {
  return raw(r, 'LOG_SLOW_STATEMENT_MS') === '-1' ? -1 : int(r, 'LOG_SLOW_STATEMENT_MS', 1000, 0, 3_600_000);
}

/** A shared secret sent as a bearer token: 16-512 printable characters, or unset. */
function printableToken(r: Reader, key: string): string | null {
  const v = str(r, key);
  if (v !== null && !/^[\x21-\x7e]{16,512}$/.test(v))
    r.problems.push(`${key} must be 16-512 printable characters without spaces`);
  return v !== null && /^[\x21-\x7e]{16,512}$/.test(v) ? v : null;
}

/** The process environment with a `.env` file (if any) underneath it: real env wins. */
export function readEnv(dotenvPath = '.env'): Env {
  const fromFile = existsSync(dotenvPath) ? parseDotenv(readFileSync(dotenvPath)) : {};
  return { ...fromFile, ...process.env };
}

function deepFreeze<T>(value: T): Readonly<T> {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** `DB_SCHEMAS=api,reporting`: schemas exposed beside public (which stays exposed and the default). */
function schemas(r: Reader): string[] {
  const given = list(r, 'DB_SCHEMAS') ?? [];
  const bad = given.filter(
    (s) =>
      !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(s) || /^(pg_|information_schema$|auth$|system$|storage$|realtime$)/.test(s),
  );
  if (bad.length)
    r.problems.push(
      `DB_SCHEMAS must list schema names (letters, digits, _), not pg_*, information_schema or Plinth's own (auth, system, storage, realtime); got ${bad.join(', ')}`,
    );
  return ['public', ...given.filter((s) => s !== 'public' && !bad.includes(s))];
}

/** Image transforms' limits (docs/storage.md, "What one render may cost"). */
function readImages(r: Reader): Config['storage']['images'] {
  return {
    maxInputPixels: int(r, 'IMAGE_MAX_INPUT_PIXELS', 50_000_000, 1, 1_000_000_000),
    maxInputBytes: int(r, 'IMAGE_MAX_INPUT_BYTES', 32 * MIB, 1, 1024 * MIB),
    cacheBytes: int(r, 'IMAGE_CACHE_BYTES', 256 * MIB, 0, 1024 * 1024 * MIB),
    maxOutputPixels: int(r, 'IMAGE_MAX_OUTPUT_PIXELS', 4096 * 4096, 1, 1_000_000_000),
    maxAvifPixels: int(r, 'IMAGE_MAX_AVIF_PIXELS', 2048 * 2048, 1, 1_000_000_000),
    concurrentRenders: int(r, 'IMAGE_CONCURRENT_RENDERS', 2, 1, 64),
    renderQueue: int(r, 'IMAGE_RENDER_QUEUE', 16, 0, 10_000),
    renderSeconds: int(r, 'IMAGE_RENDER_SECONDS', 10, 1, 600),
  };
}
