import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './index.js';

describe('loadConfig', () => {
  it('needs nothing: defaults for a laptop, no secret defaulted', () => {
    const c = loadConfig({});
    expect(c.port).toBe(7130);
    expect(c.dataDir).toBe('./data');
    expect(c.databaseUrl).toBeNull();
    expect(c.rateLimit).toEqual({ plan: 'free', perMinute: 100, adminPerMinute: 10_000, redisUrl: null });
    expect(c.credentials).toEqual({ adminApiKey: null, anonKey: null, jwtSecret: null });
    expect(c.storage.s3).toBeNull();
    expect(c.storage.maxUploadBytes).toBe(100 * 1024 * 1024);
    expect(c.functions.timeoutMs).toBe(30_000);
    expect(Object.isFrozen(c) && Object.isFrozen(c.auth)).toBe(true);
  });

  it('reports every problem at once', () => {
    let err: unknown;
    try {
      loadConfig({
        PORT: 'abc',
        RATE_LIMIT_PLAN: 'gold',
        JWT_SECRET: 'short',
        DATABASE_URL: 'mysql://x',
        REQUIRE_EMAIL_VERIFICATION: 'maybe',
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const problems = (err as ConfigError).problems;
    expect(problems).toHaveLength(5);
    for (const key of ['PORT', 'RATE_LIMIT_PLAN', 'JWT_SECRET', 'DATABASE_URL', 'REQUIRE_EMAIL_VERIFICATION']) {
      expect((err as ConfigError).message).toContain(key);
    }
    // The bad secret value itself is never echoed.
    expect((err as ConfigError).message).not.toContain('short');
  });

  it('takes plans and enterprise limits', () => {
    expect(loadConfig({ RATE_LIMIT_PLAN: 'pro' }).rateLimit.perMinute).toBe(1000);
    expect(loadConfig({ RATE_LIMIT_PLAN: 'enterprise', RATE_LIMIT_PER_MINUTE: '5000' }).rateLimit.perMinute).toBe(5000);
    expect(loadConfig({}).rateLimit.adminPerMinute).toBe(10_000);
    expect(loadConfig({ RATE_LIMIT_ADMIN_PER_MINUTE: '50000' }).rateLimit.adminPerMinute).toBe(50_000);
    expect(() => loadConfig({ RATE_LIMIT_ADMIN_PER_MINUTE: '0' })).toThrow(/RATE_LIMIT_ADMIN_PER_MINUTE/);
    expect(() => loadConfig({ RATE_LIMIT_PLAN: 'enterprise' })).toThrow(/RATE_LIMIT_PER_MINUTE is required/);
    expect(loadConfig({ RATE_LIMIT_PLAN: 'off' }).rateLimit.plan).toBe('off');
  });

  it('checks the shape of key overrides', () => {
    expect(() => loadConfig({ ADMIN_API_KEY: 'admin' })).toThrow(/ADMIN_API_KEY/);
    expect(() => loadConfig({ ANON_KEY: `ik_${'a'.repeat(64)}` })).toThrow(/ANON_KEY/);
    const c = loadConfig({ ADMIN_API_KEY: `ik_${'a'.repeat(64)}`, ANON_KEY: `anon_${'b'.repeat(64)}` });
    expect(c.credentials.adminApiKey).toBe(`ik_${'a'.repeat(64)}`);
  });

  it('groups S3 settings and insists on a bucket and paired credentials', () => {
    expect(() => loadConfig({ S3_ENDPOINT: 'http://127.0.0.1:9000' })).toThrow(/S3_BUCKET is required/);
    expect(() => loadConfig({ S3_BUCKET: 'files', S3_ACCESS_KEY_ID: 'x' })).toThrow(/set together/);
    const c = loadConfig({ S3_BUCKET: 'files', S3_FORCE_PATH_STYLE: 'true', S3_ENDPOINT: 'http://127.0.0.1:9000/' });
    expect(c.storage.s3).toMatchObject({
      bucket: 'files',
      forcePathStyle: true,
      endpoint: 'http://127.0.0.1:9000',
      region: 'us-east-1',
    });
  });

  it('parses CORS origins and AI models as lists', () => {
    const c = loadConfig({ CORS_ORIGINS: 'https://a.example, https://b.example', AI_MODELS: 'gpt-4o-mini,llama3' });
    expect(c.corsOrigins).toEqual(['https://a.example', 'https://b.example']);
    expect(loadConfig({ DB_SCHEMAS: 'api, public,reports' }).dbSchemas).toEqual(['public', 'api', 'reports']);
    expect(loadConfig({}).dbSchemas).toEqual(['public']);
    expect(() => loadConfig({ DB_SCHEMAS: 'api,pg_catalog' })).toThrow(/DB_SCHEMAS/);
    expect(c.ai.models).toEqual(['gpt-4o-mini', 'llama3']);
  });
});
