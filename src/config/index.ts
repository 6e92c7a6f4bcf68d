import { existsSync, readFileSync } from 'node:fs';
import { parse as parseDotenv } from 'dotenv';

/** The whole configuration: parsed once at start, validated fully, frozen, then injected. */
export interface Config {
  port: number;
  host: string;
  publicUrl: string | null;
  dataDir: string;
  databaseUrl: string | null;
  logLevel: string;
  trustProxy: boolean;
  bodyLimitBytes: number;
  corsOrigins: string[] | null;
  credentials: { adminApiKey: string | null; anonKey: string | null; jwtSecret: string | null };
  auth: {
    tokenTtlSeconds: number;
    refreshTokenTtlSeconds: number;
    requireEmailVerification: boolean;
    smtpUrl: string | null;
    mailFrom: string;
  };
  rateLimit: { plan: RateLimitPlan; perMinute: number; redisUrl: string | null };
  storage: {
    maxUploadBytes: number;
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
  };
  ai: {
    baseUrl: string | null;
    apiKey: string | null;
    models: string[] | null;
    defaultModel: string | null;
    allowAnon: boolean;
    userDailyTokens: number | null;
    timeoutMs: number;
  };
}

export type RateLimitPlan = 'free' | 'pro' | 'enterprise' | 'off';

type Env = Record<string, string | undefined>;

/** Raised when the environment is invalid; `problems` lists every bad key at once. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Collects problems while reading; every parser below reports into it. */
interface Reader {
  problems: string[];
  env: Env;
}

function raw(r: Reader, key: string): string | undefined {
  const v = r.env[key];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function str(r: Reader, key: string): string | null;
function str(r: Reader, key: string, def: string): string;
function str(r: Reader, key: string, def?: string): string | null {
  return raw(r, key) ?? def ?? null;
}

function int(r: Reader, key: string, def: number, min: number, max: number): number {
  const v = raw(r, key);
  if (v === undefined) return def;
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
    r.problems.push(`${key} must be a whole number from ${min} to ${max} (got "${v}")`);
    return def;
  }
  return Number(v);
}

function optInt(r: Reader, key: string, min: number, max: number): number | null {
  return raw(r, key) === undefined ? null : int(r, key, 0, min, max);
}

function bool(r: Reader, key: string, def: boolean): boolean {
  const v = raw(r, key)?.toLowerCase();
  if (v === undefined) return def;
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  r.problems.push(`${key} must be true or false (got "${v}")`);
  return def;
}

function url(r: Reader, key: string, protocols: string[]): string | null {
  const v = raw(r, key);
  if (v === undefined) return null;
  try {
    const u = new URL(v);
    if (!protocols.includes(u.protocol)) throw new Error('protocol');
    return v.replace(/\/+$/, '');
  } catch {
    r.problems.push(`${key} must be a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}`);
    return null;
  }
}

function list(r: Reader, key: string): string[] | null {
  const v = raw(r, key);
  if (v === undefined) return null;
  const items = v.split(',').map((s) => s.trim()).filter(Boolean);
  return items.length ? items : null;
}

function oneOf<T extends string>(r: Reader, key: string, values: readonly T[], def: T): T {
  const v = raw(r, key);
  if (v === undefined) return def;
  if (!(values as readonly string[]).includes(v)) {
    r.problems.push(`${key} must be one of ${values.join(', ')} (got "${v}")`);
    return def;
  }
  return v as T;
}

function secret(r: Reader, key: string, pattern: RegExp, shape: string): string | null {
  const v = raw(r, key);
  if (v === undefined) return null;
  if (!pattern.test(v)) {
    r.problems.push(`${key} must be ${shape} (leave it unset to have one generated and persisted)`);
    return null;
  }
  return v;
}

const MIB = 1024 * 1024;

/** Parses and validates `env`. Throws ConfigError naming every problem at once. */
export function loadConfig(env: Env): Readonly<Config> {
  const r: Reader = { problems: [], env };
  const plan = oneOf(r, 'RATE_LIMIT_PLAN', ['free', 'pro', 'enterprise', 'off'] as const, 'free');
  const perMinuteRaw = raw(r, 'RATE_LIMIT_PER_MINUTE');
  if (plan === 'enterprise' && perMinuteRaw === undefined) {
    r.problems.push('RATE_LIMIT_PER_MINUTE is required when RATE_LIMIT_PLAN=enterprise');
  }
  const perMinute = int(r, 'RATE_LIMIT_PER_MINUTE', plan === 'pro' ? 1000 : 100, 1, 10_000_000);
  const s3Bucket = str(r, 'S3_BUCKET');
  const s3Endpoint = url(r, 'S3_ENDPOINT', ['http:', 'https:']);
  const s3Region = str(r, 'S3_REGION', 'us-east-1');
  const s3AccessKeyId = str(r, 'S3_ACCESS_KEY_ID');
  const s3Secret = str(r, 'S3_SECRET_ACCESS_KEY');
  const s3PathStyle = bool(r, 'S3_FORCE_PATH_STYLE', false);
  if (!s3Bucket && (s3Endpoint || s3AccessKeyId || s3Secret)) {
    r.problems.push('S3_BUCKET is required when other S3_* variables are set');
  }
  if (s3Bucket && !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(s3Bucket)) {
    r.problems.push('S3_BUCKET must be a valid S3 bucket name (3-63 lower-case letters, digits, dots, hyphens)');
  }
  if (Boolean(s3AccessKeyId) !== Boolean(s3Secret)) {
    r.problems.push('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together');
  }
  const aiBase = url(r, 'AI_BASE_URL', ['http:', 'https:']);
  const runtimeToken = str(r, 'FUNCTION_RUNTIME_TOKEN');
  if (runtimeToken !== null && !/^[\x21-\x7e]{16,512}$/.test(runtimeToken)) {
    r.problems.push('FUNCTION_RUNTIME_TOKEN must be 16-512 printable characters without spaces');
  }
  const config: Config = {
    port: int(r, 'PORT', 7130, 0, 65535),
    host: str(r, 'HOST', '0.0.0.0'),
    publicUrl: url(r, 'PUBLIC_URL', ['http:', 'https:']),
    dataDir: str(r, 'DATA_DIR', './data'),
    databaseUrl: url(r, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    logLevel: oneOf(r, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    trustProxy: bool(r, 'TRUST_PROXY', false),
    bodyLimitBytes: int(r, 'BODY_LIMIT_BYTES', MIB, 1024, 100 * MIB),
    corsOrigins: list(r, 'CORS_ORIGINS'),
    credentials: {
      adminApiKey: secret(r, 'ADMIN_API_KEY', /^ik_[A-Za-z0-9]{32,128}$/, '"ik_" followed by 32-128 letters or digits'),
      anonKey: secret(r, 'ANON_KEY', /^anon_[A-Za-z0-9]{32,128}$/, '"anon_" followed by 32-128 letters or digits'),
      jwtSecret: secret(r, 'JWT_SECRET', /^.{32,512}$/, 'at least 32 characters'),
    },
    auth: {
      tokenTtlSeconds: int(r, 'TOKEN_TTL', 900, 30, 86_400),
      refreshTokenTtlSeconds: int(r, 'REFRESH_TOKEN_TTL', 30 * 86_400, 60, 365 * 86_400),
      requireEmailVerification: bool(r, 'REQUIRE_EMAIL_VERIFICATION', false),
      smtpUrl: url(r, 'SMTP_URL', ['smtp:', 'smtps:']),
      mailFrom: str(r, 'MAIL_FROM', 'Plinth <no-reply@localhost>'),
    },
    rateLimit: {
      plan,
      perMinute: plan === 'free' ? 100 : plan === 'pro' ? 1000 : perMinute,
      redisUrl: url(r, 'REDIS_URL', ['redis:', 'rediss:']),
    },
    storage: {
      maxUploadBytes: int(r, 'MAX_UPLOAD_BYTES', 100 * MIB, 1, 1024 * 1024 * MIB),
      s3: s3Bucket
        ? {
            bucket: s3Bucket,
            endpoint: s3Endpoint,
            region: s3Region,
            accessKeyId: s3AccessKeyId,
            secretAccessKey: s3Secret,
            forcePathStyle: s3PathStyle,
          }
        : null,
    },
    functions: {
      runtimeUrl: url(r, 'FUNCTION_RUNTIME_URL', ['http:', 'https:']),
      runtimeToken,
      timeoutMs: int(r, 'FUNCTION_TIMEOUT_MS', 30_000, 100, 15 * 60_000),
      memoryMb: int(r, 'FUNCTION_MEMORY_MB', 128, 16, 4096),
    },
    ai: {
      baseUrl: aiBase,
      apiKey: str(r, 'AI_API_KEY'),
      models: list(r, 'AI_MODELS'),
      defaultModel: str(r, 'AI_DEFAULT_MODEL'),
      allowAnon: bool(r, 'AI_ALLOW_ANON', false),
      userDailyTokens: optInt(r, 'AI_USER_DAILY_TOKENS', 1, 1_000_000_000_000),
      timeoutMs: int(r, 'AI_TIMEOUT_MS', 60_000, 100, 15 * 60_000),
    },
  };
  if (r.problems.length) throw new ConfigError(r.problems);
  return deepFreeze(config);
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
