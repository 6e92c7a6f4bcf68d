// `<NAME>_FILE` variables: secrets from files (Docker and Kubernetes secrets), real files on disk.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './index.js';

const dir = mkdtempSync(path.join(tmpdir(), 'plinth-secret-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, content: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, content);
  return p;
}

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

const ADMIN = `ik_${'a'.repeat(40)}`;
const JWT = 'j'.repeat(48);

describe('secret files (<NAME>_FILE)', () => {
  it('reads every secret and password-carrying URL from its file, without the trailing newline', () => {
    const c = loadConfig({
      ADMIN_API_KEY_FILE: file('admin', `${ADMIN}\n`),
      ANON_KEY_FILE: file('anon', `anon_${'b'.repeat(40)}\r\n`),
      JWT_SECRET_FILE: file('jwt', JWT),
      DATABASE_URL_FILE: file('db', 'postgres://plinth:p%40ss@db.internal:5432/plinth\n'),
      REDIS_URL_FILE: file('redis', 'redis://:hunter2@cache:6379\n'),
      SMTP_URL_FILE: file('smtp', 'smtps://mailer:s3cret@smtp.example.com:465\n'),
      S3_BUCKET: 'files',
      S3_ACCESS_KEY_ID_FILE: file('s3id', 'AKIAEXAMPLE\n'),
      S3_SECRET_ACCESS_KEY_FILE: file('s3secret', 'wJalrXUtnFEMI/K7MDENG\n'),
      AI_API_KEY_FILE: file('ai', 'sk-test\n'),
      METRICS_TOKEN_FILE: file('metrics', 'metrics-token-0123456789\n'),
      FUNCTION_RUNTIME_TOKEN_FILE: file('fn', 'runtime-token-0123456789\n'),
      OAUTH_PROVIDERS: 'github',
      OAUTH_GITHUB_CLIENT_ID: 'gh-id',
      OAUTH_GITHUB_CLIENT_SECRET_FILE: file('gh', 'gh-secret\n'),
    });
    expect(c.credentials).toEqual({ adminApiKey: ADMIN, anonKey: `anon_${'b'.repeat(40)}`, jwtSecret: JWT });
    expect(c.databaseUrl).toBe('postgres://plinth:p%40ss@db.internal:5432/plinth');
    expect(c.rateLimit.redisUrl).toBe('redis://:hunter2@cache:6379');
    expect(c.auth.smtpUrl).toBe('smtps://mailer:s3cret@smtp.example.com:465');
    expect(c.storage.s3).toMatchObject({ accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG' });
    expect(c.ai.apiKey).toBe('sk-test');
    expect(c.metricsToken).toBe('metrics-token-0123456789');
    expect(c.functions.runtimeToken).toBe('runtime-token-0123456789');
    expect(JSON.stringify(c.auth.oauth)).toContain('gh-secret');
    // The effective configuration lists the _FILE variables and masks what they held.
    const vars = new Map(c.variables.map((v) => [v.name, v]));
    expect(vars.get('ADMIN_API_KEY')).toMatchObject({ value: '****', secret: true, set: true });
    expect(vars.get('DATABASE_URL')?.value).toBe('postgres://plinth:****@db.internal:5432/plinth');
    expect(vars.has('ADMIN_API_KEY_FILE')).toBe(true);
    expect(JSON.stringify(c.variables)).not.toContain('hunter2');
    expect(JSON.stringify(c.variables)).not.toContain(ADMIN);
  });

  it('validates a value from a file like one from the environment, without echoing it', () => {
    const problems = problemsOf({ JWT_SECRET_FILE: file('short', 'too-short\n') });
    expect(problems).toEqual([expect.stringMatching(/^JWT_SECRET must be at least 32 characters/)]);
    expect(problems.join('\n')).not.toContain('too-short');
  });

  it('names each bad file in one line: missing, a directory, empty, several lines, both set', () => {
    mkdirSync(path.join(dir, 'adir'));
    const problems = problemsOf({
      ADMIN_API_KEY_FILE: path.join(dir, 'missing'),
      JWT_SECRET_FILE: path.join(dir, 'adir'),
      ANON_KEY_FILE: file('empty', '\n'),
      REDIS_URL_FILE: file('two-lines', 'redis://a:6379\nredis://b:6379\n'),
      DATABASE_URL: 'postgres://x@h/db',
      DATABASE_URL_FILE: file('db2', 'postgres://y@h/db\n'),
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        `ADMIN_API_KEY_FILE: ${path.join(dir, 'missing')} does not exist`,
        `JWT_SECRET_FILE: ${path.join(dir, 'adir')} is a directory, not a file`,
        `ANON_KEY_FILE: ${path.join(dir, 'empty')} is empty`,
        `REDIS_URL_FILE: ${path.join(dir, 'two-lines')} holds more than one line; a secret file holds the value alone`,
        'DATABASE_URL and DATABASE_URL_FILE are both set: set one of them',
      ]),
    );
    expect(problems).toHaveLength(5);
  });

  it('says when the file is not readable by this user', () => {
    if (process.getuid?.() === 0) return; // root reads any file
    const p = file('locked', `${JWT}\n`);
    chmodSync(p, 0o000);
    expect(problemsOf({ JWT_SECRET_FILE: p })).toEqual([`JWT_SECRET_FILE: ${p} is not readable by this user`]);
  });

  it('ignores _FILE on variables that are no secret (DATA_DIR_FILE is not DATA_DIR)', () => {
    const c = loadConfig({ DATA_DIR_FILE: file('datadir', '/elsewhere\n') });
    expect(c.dataDir).toBe('./data');
  });
});
