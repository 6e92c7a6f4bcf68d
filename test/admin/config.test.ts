// GET /api/admin/config against a real server started with known secrets: none of them
// appears anywhere in the answer (the raw text is searched), nor in the MCP get-config tool's,
// while the plain values show with where they came from; only the admin may read it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { call, type Answer } from '../helpers/http.js';
import { mcpClient } from '../mcp/helpers.js';

const SECRETS = {
  JWT_SECRET: 'jwt-Secret-Value-That-Is-Long-Enough-0123456789',
  ANON_KEY: `anon_${'A1b2C3d4'.repeat(5)}`,
  METRICS_TOKEN: 'metricsTokenValue-9f8e7d6c',
  FUNCTION_RUNTIME_TOKEN: 'runtimeTokenValue-5a4b3c2d',
  AI_API_KEY: 'sk-aiKeyValue-1234567890',
  OAUTH_GITHUB_CLIENT_SECRET: 'githubClientSecretValue-42',
};
const SMTP_PASSWORD = 'smtpPassw0rdValue';
const DB_PASSWORD = 'dbPassw0rd@Value';
const DB_SSL_PASSWORD = 'sslPassw0rdValue';

interface Row {
  name: string;
  value: string | null;
  source: string;
  secret: boolean;
  set?: boolean;
  description?: string;
}

describe.each(backends())('GET /api/admin/config (%s)', (backend) => {
  let t: TestApp;
  let answer: Answer;
  const row = (name: string) => (answer.body.variables as Row[]).find((r) => r.name === name);

  beforeAll(async () => {
    t = await startApp(backend, {
      ...SECRETS,
      LOG_LEVEL: 'warn',
      SMTP_URL: `smtp://mailer:${SMTP_PASSWORD}@127.0.0.1:2525`,
      // Shown, never used: the tests hand the database in.
      DATABASE_URL: `postgres://plinth:${encodeURIComponent(DB_PASSWORD)}@db.internal:5432/app?sslmode=require&sslpassword=${DB_SSL_PASSWORD}`,
      AI_BASE_URL: 'http://127.0.0.1:9/v1',
      OAUTH_PROVIDERS: 'github',
      OAUTH_GITHUB_CLIENT_ID: 'github-client-id',
    });
    answer = await call(t, 'GET', '/api/admin/config', { headers: { 'x-api-key': t.adminKey } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('returns no secret anywhere in the body', () => {
    expect(answer.status, answer.text).toBe(200);
    for (const value of [
      ...Object.values(SECRETS),
      t.adminKey,
      SMTP_PASSWORD,
      DB_PASSWORD,
      encodeURIComponent(DB_PASSWORD),
      DB_SSL_PASSWORD,
      'Passw0rd',
    ]) {
      expect(answer.text).not.toContain(value);
    }
  });

  it('shows each secret as set or not set, masked', () => {
    for (const name of [...Object.keys(SECRETS), 'ADMIN_API_KEY']) {
      expect(row(name), name).toEqual({ name, value: '****', source: 'env', secret: true, set: true });
    }
    expect(row('S3_SECRET_ACCESS_KEY')).toEqual({
      name: 'S3_SECRET_ACCESS_KEY',
      value: null,
      source: 'default',
      secret: true,
      set: false,
    });
  });

  it('shows URLs with their password replaced, and plain values with their source', () => {
    expect(row('SMTP_URL')).toMatchObject({ value: 'smtp://mailer:****@127.0.0.1:2525', source: 'env', secret: false });
    expect(row('DATABASE_URL')?.value).toBe(
      'postgres://plinth:****@db.internal:5432/app?sslmode=require&sslpassword=****',
    );
    expect(row('LOG_LEVEL')).toEqual({ name: 'LOG_LEVEL', value: 'warn', source: 'env', secret: false });
    expect(row('PORT')).toMatchObject({ value: '0', source: 'env' });
    expect(row('TOKEN_TTL')).toEqual({ name: 'TOKEN_TTL', value: '900', source: 'default', secret: false });
    expect(row('MAIL_FROM')).toMatchObject({ value: 'Plinth <no-reply@localhost>', source: 'default' });
    expect(row('OAUTH_GITHUB_CLIENT_ID')).toMatchObject({ value: 'github-client-id', source: 'env', secret: false });
    expect(row('REDIS_URL')).toMatchObject({ value: null, source: 'default' });
  });

  it('adds the facts derived from what started', () => {
    const derived = (answer.body.variables as Row[]).filter((r) => r.source === 'derived');
    expect(Object.fromEntries(derived.map((r) => [r.name, r.value]))).toEqual({
      version: t.deps.version,
      // The tests hand the database in: no cluster of this process, so a server.
      database: 'server',
      storage: 'local',
      'realtime adapter': 'in-process',
      'rate-limit counters': 'in-process',
      jobs: 'on',
      smtp: 'configured',
      ai: 'configured',
      'oauth providers': 'github',
    });
    expect(derived.every((r) => r.description && !r.secret)).toBe(true);
  });

  it('MCP get-config answers the same rows, read-only, without a secret', async () => {
    const agent = await mcpClient(t, { readOnly: true });
    const r = await agent.text('get-config');
    await agent.close();
    expect(r.isError, r.text).toBe(false);
    expect(r.text).toContain('| LOG_LEVEL | warn | env |');
    expect(r.text).toContain('| JWT_SECRET | set (hidden) | env |');
    expect(r.text).toContain('| SMTP_URL | smtp://mailer:****@127.0.0.1:2525 | env |');
    expect(r.text).toContain('| storage | local | derived |');
    for (const value of [...Object.values(SECRETS), t.adminKey, SMTP_PASSWORD, DB_PASSWORD, DB_SSL_PASSWORD])
      expect(r.text).not.toContain(value);
  });

  it('is for the admin only', async () => {
    const none = await call(t, 'GET', '/api/admin/config');
    expect(none.status).toBe(401);
    expect(none.body.error).toBe('UNAUTHORIZED');
    const anon = await call(t, 'GET', '/api/admin/config', { headers: { apikey: t.anonKey } });
    expect(anon.status).toBe(403);
    const user = await createTestUser(t);
    const asUser = await call(t, 'GET', '/api/admin/config', { token: user.token });
    expect(asUser.status).toBe(403);
    expect(asUser.body.error).toBe('FORBIDDEN');
    expect(asUser.text).not.toContain(SECRETS.JWT_SECRET);
  });
});
