// The effective configuration as an operator may see it (GET /api/admin/config, the dashboard's
// Settings, the MCP get-config tool): every variable read, where its value came from, and no
// secret. Values are masked here, when the configuration is loaded, so no unmasked copy of this
// list ever exists to leak.
import type { Reader } from './reader.js';

/** One variable of the configuration, or a fact derived from it and from what started. */
export interface ConfigVariable {
  name: string;
  /** The value as text, passwords in URLs as `****`; a secret's is `****` when set; null: unset without a default. */
  value: string | null;
  /** `env`: set in the environment (or .env); `default`: unset, its default applies; `derived`: a fact of the running server. */
  source: 'env' | 'default' | 'derived';
  secret: boolean;
  /** Secrets only: whether the variable is set. */
  set?: boolean;
  description?: string;
}

export const MASK = '****';

/** Variables holding a credential whose names the fallback pattern would not catch, and the core ones, listed explicitly. */
export const SECRET_VARIABLES: ReadonlySet<string> = new Set([
  'ADMIN_API_KEY',
  'ANON_KEY',
  'JWT_SECRET',
  'AI_API_KEY',
  'S3_ACCESS_KEY_ID',
  'S3_SECRET_ACCESS_KEY',
  'METRICS_TOKEN',
  'FUNCTION_RUNTIME_TOKEN',
  'FUNCTION_NPM_TOKEN',
]);

/** The fallback: a variable named like a secret (OAUTH_<NAME>_CLIENT_SECRET, a future SMTP_PASSWORD) is masked without being listed. */
const SECRET_NAME = /SECRET|PASSWORD|TOKEN|_KEY$/;

/** Named like a secret but not one (lifetimes, a budget, client ids): shown. Only names listed here escape the pattern. */
const NOT_SECRET: ReadonlySet<string> = new Set([
  'TOKEN_TTL',
  'REFRESH_TOKEN_TTL',
  'AI_USER_DAILY_TOKENS',
  'OAUTH_<NAME>_ID_TOKEN_AUDIENCES',
]);

export function isSecretVariable(name: string): boolean {
  const generic = name.replace(/^OAUTH_[A-Z0-9_]+_(ID_TOKEN_AUDIENCES)$/, 'OAUTH_<NAME>_$1');
  return SECRET_VARIABLES.has(name) || (SECRET_NAME.test(name) && !NOT_SECRET.has(generic));
}

// `scheme://user:password@` (the user stays visible; the password runs to the last @ of the
// authority, so an unescaped @ in it leaks nothing) and query parameters that speak of a
// password, key, token, secret or signature (`?password=`, `?sslkey=` …), wherever in the value.
const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s/?#@:]*):[^\s/?#]*@/gi;
const SECRET_PARAM = /([?&][^=&\s]*(?:pass|secret|token|key|sig|credential|auth)[^=&\s]*=)[^&\s#]*/gi;

/** `value` with every password in a URL and every secret-looking query parameter replaced by ****. */
export function maskUrls(value: string): string {
  return value.replace(URL_PASSWORD, `$1:${MASK}@`).replace(SECRET_PARAM, `$1${MASK}`);
}

/** Every variable `r` has read, in reading order, masked. */
export function variablesOf(r: Reader): ConfigVariable[] {
  return [...r.read].map(([name, def]) => {
    const given = r.env[name]?.trim() || undefined;
    const source = given === undefined ? 'default' : 'env';
    if (isSecretVariable(name))
      return { name, value: given === undefined ? null : MASK, source, secret: true, set: given !== undefined };
    const value = given ?? def;
    return { name, value: value === null ? null : maskUrls(value), source, secret: false };
  });
}

/** What the running server is made of, derived from its configuration and what started. */
export interface ServerFacts {
  version: string;
  database: 'embedded' | 'server' | 'pglite';
  storage: 'local' | 's3';
  jobs: boolean;
  ai: boolean;
  smtp: boolean;
  redis: boolean;
  oauthProviders: string[];
}

/** The facts as configuration rows (source `derived`), each saying what it means. */
export function derivedVariables(f: ServerFacts): ConfigVariable[] {
  const row = (name: string, value: string | null, description: string): ConfigVariable => ({
    name,
    value,
    source: 'derived',
    secret: false,
    description,
  });
  return [
    row('version', f.version, 'the Plinth version this server runs'),
    row(
      'database',
      f.database,
      'embedded: the Postgres server Plinth runs itself under DATA_DIR; server: the Postgres at DATABASE_URL; pglite: PGlite in the process',
    ),
    row('storage', f.storage, 'local: files under DATA_DIR; s3: the bucket of S3_BUCKET'),
    row(
      'realtime adapter',
      f.redis ? 'redis' : 'in-process',
      'redis: channels and presence span every instance (REDIS_URL); in-process: this instance only',
    ),
    row(
      'rate-limit counters',
      f.redis ? 'redis' : 'in-process',
      'redis: limits shared by every instance (REDIS_URL); in-process: per instance',
    ),
    row(
      'jobs',
      f.jobs ? 'on' : 'off',
      'the job queue that runs schedules, webhook deliveries and queued email (off on PGlite)',
    ),
    row(
      'smtp',
      f.smtp ? 'configured' : 'not configured',
      'configured: email goes to SMTP_URL; not configured: it is written to the log (unless NODE_ENV=production)',
    ),
    row(
      'ai',
      f.ai ? 'configured' : 'not configured',
      'the AI gateway (AI_BASE_URL); not configured: /api/ai answers 503',
    ),
    row(
      'oauth providers',
      f.oauthProviders.length ? f.oauthProviders.join(', ') : null,
      'the sign-in providers enabled (OAUTH_PROVIDERS)',
    ),
  ];
}
