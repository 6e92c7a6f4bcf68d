import { describe, expect, it } from 'vitest';
import { loadConfig } from './index.js';
import { isSecretVariable, maskUrls } from './effective.js';

describe('the effective configuration', () => {
  it('lists every variable read, with its source, and keeps no secret value', () => {
    const env = {
      S3_BUCKET: 'media',
      S3_ENDPOINT: 'http://minio:minioPassw0rd@127.0.0.1:9000',
      S3_ACCESS_KEY_ID: 'AKIAEXAMPLEKEYID',
      S3_SECRET_ACCESS_KEY: 's3SecretAccessKeyValue',
      REDIS_URL: 'redis://:redisPassw0rd@127.0.0.1:6379/0',
      OAUTH_PROVIDERS: 'acme',
      OAUTH_ACME_ISSUER: 'https://id.example.com',
      OAUTH_ACME_CLIENT_ID: 'acme-app',
      OAUTH_ACME_CLIENT_SECRET: 'acmeClientSecretValue',
      OAUTH_ACME_ID_TOKEN_AUDIENCES: 'ios-app,android-app',
      HOST: '  127.0.0.1 ',
    };
    const { variables } = loadConfig(env);
    const text = JSON.stringify(variables);
    for (const secret of [
      'minioPassw0rd',
      'AKIAEXAMPLEKEYID',
      's3SecretAccessKeyValue',
      'redisPassw0rd',
      'acmeClientSecretValue',
    ])
      expect(text).not.toContain(secret);
    const byName = new Map(variables.map((v) => [v.name, v]));
    expect(byName.get('S3_ENDPOINT')?.value).toBe('http://minio:****@127.0.0.1:9000');
    expect(byName.get('REDIS_URL')?.value).toBe('redis://:****@127.0.0.1:6379/0');
    expect(byName.get('S3_ACCESS_KEY_ID')).toEqual({
      name: 'S3_ACCESS_KEY_ID',
      value: '****',
      source: 'env',
      secret: true,
      set: true,
    });
    expect(byName.get('OAUTH_ACME_ID_TOKEN_AUDIENCES')).toMatchObject({ value: 'ios-app,android-app', secret: false });
    expect(byName.get('HOST')).toEqual({ name: 'HOST', value: '127.0.0.1', source: 'env', secret: false });
    expect(byName.get('S3_REGION')).toEqual({
      name: 'S3_REGION',
      value: 'us-east-1',
      source: 'default',
      secret: false,
    });
    expect(byName.get('JWT_SECRET')).toEqual({
      name: 'JWT_SECRET',
      value: null,
      source: 'default',
      secret: true,
      set: false,
    });
    expect(
      variables
        .filter((v) => v.secret)
        .map((v) => v.name)
        .sort(),
    ).toEqual(
      [
        'ADMIN_API_KEY',
        'AI_API_KEY',
        'ANON_KEY',
        'FUNCTION_NPM_TOKEN',
        'FUNCTION_RUNTIME_TOKEN',
        'JWT_SECRET',
        'METRICS_TOKEN',
        'OAUTH_ACME_CLIENT_SECRET',
        'S3_ACCESS_KEY_ID',
        'S3_SECRET_ACCESS_KEY',
      ].sort(),
    );
  });

  it.each([
    ['SMTP_PASSWORD', true],
    ['STRIPE_API_KEY', true],
    ['SOME_SECRET_THING', true],
    ['GITHUB_TOKEN', true],
    ['OAUTH_X_CLIENT_SECRET', true],
    ['TOKEN_TTL', false],
    ['OAUTH_MY_IDP_ID_TOKEN_AUDIENCES', false],
    ['KEYCLOAK_URL', false],
    ['LOG_LEVEL', false],
  ])('a variable named %s is secret: %s (listed, or by the fallback pattern)', (name, secret) => {
    expect(isSecretVariable(name)).toBe(secret);
  });

  it.each([
    ['postgres://app:p@ss@db:5432/x', 'postgres://app:****@db:5432/x'],
    [
      'postgres://app@db/x?sslmode=require&password=pw&sslkey=/k',
      'postgres://app@db/x?sslmode=require&password=****&sslkey=****',
    ],
    ['smtps://u:pw@a:465,https://b:pw2@c', 'smtps://u:****@a:465,https://b:****@c'],
    ['http://localhost:8080/v1', 'http://localhost:8080/v1'],
    ['Plinth <no-reply@localhost>', 'Plinth <no-reply@localhost>'],
  ])('masks %s as %s', (value, masked) => {
    expect(maskUrls(value)).toBe(masked);
  });
});
