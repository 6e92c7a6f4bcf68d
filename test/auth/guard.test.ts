import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/lib/crypto.js';
import { backends } from '../helpers/db.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { expectError, uniqueEmail } from './util.js';

describe.each(backends())('sign-in brute-force guard (%s)', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    // TRUST_PROXY lets the test play several client addresses through X-Forwarded-For.
    t = await startApp(backend, { TRUST_PROXY: 'true' });
  });
  afterAll(async () => {
    await t?.close();
  });

  const signin = (email: string, password: string, ip: string) =>
    call(t, 'POST', '/api/auth/signin', { body: { email, password }, headers: { 'x-forwarded-for': ip } });

  it('blocks an email after 10 failures (429 with Retry-After), even with the right password and from elsewhere', async () => {
    const email = uniqueEmail('bf');
    expect((await call(t, 'POST', '/api/auth/signup', { body: { email, password: 'password-1' } })).status).toBe(200);
    for (let i = 0; i < 10; i++)
      expectError(await signin(email, `wrong-${i}-pass`, `10.0.0.${i}`), 401, 'INVALID_CREDENTIALS');
    const blocked = await signin(email, 'password-1', '10.0.1.1');
    expectError(blocked, 429, 'RATE_LIMITED');
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    // Other emails from the same addresses are not affected.
    const other = uniqueEmail('bf-other');
    expect((await call(t, 'POST', '/api/auth/signup', { body: { email: other, password: 'password-1' } })).status).toBe(
      200,
    );
    expect((await signin(other, 'password-1', '10.0.0.1')).status).toBe(200);
  });

  it('unknown emails count too, so the guard does not reveal which addresses exist', async () => {
    const email = uniqueEmail('bf-nobody');
    for (let i = 0; i < 10; i++)
      expectError(await signin(email, 'password-x', `10.1.0.${i}`), 401, 'INVALID_CREDENTIALS');
    expectError(await signin(email, 'password-x', '10.1.1.1'), 429, 'RATE_LIMITED');
  });

  it('blocks an address after 50 failures across many emails', async () => {
    const ip = '10.2.0.1';
    for (let i = 0; i < 50; i++)
      expectError(await signin(uniqueEmail(`bf-ip${i}`), 'password-x', ip), 401, 'INVALID_CREDENTIALS');
    expectError(await signin(uniqueEmail('bf-ip-last'), 'password-x', ip), 429, 'RATE_LIMITED');
    // Another address is still let through to the password check.
    expectError(await signin(uniqueEmail('bf-ip-other'), 'password-x', '10.2.0.2'), 401, 'INVALID_CREDENTIALS');
  });

  it('a successful sign-in forgives the earlier failures of that email', async () => {
    const email = uniqueEmail('bf-ok');
    await call(t, 'POST', '/api/auth/signup', { body: { email, password: 'password-1' } });
    for (let i = 0; i < 9; i++) await signin(email, 'password-x', `10.3.0.${i}`);
    expect((await signin(email, 'password-1', '10.3.1.1')).status).toBe(200);
    for (let i = 0; i < 9; i++)
      expectError(await signin(email, 'password-x', `10.3.2.${i}`), 401, 'INVALID_CREDENTIALS');
    expect((await signin(email, 'password-1', '10.3.1.1')).status).toBe(200);
  });
});

// Needs a Redis server: set TEST_REDIS_URL (CI does: redis://127.0.0.1:6379).
const REDIS = process.env.TEST_REDIS_URL;

describe.skipIf(!REDIS)('sign-in guard shared through Redis by two instances', () => {
  let one: TestApp;
  let two: TestApp;
  const email = uniqueEmail('bf-redis');
  // Addresses of this run only: the counters live in a Redis that other runs share.
  const net = `10.${1 + Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
  const ips = [...Array.from({ length: 10 }, (_, i) => `${net}.${i}`), `${net}.250`];
  beforeAll(async () => {
    const env = { REDIS_URL: REDIS ?? '', TRUST_PROXY: 'true' };
    one = await startApp('embedded', env);
    two = await startApp('embedded', env);
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
    const r = new Redis(REDIS!);
    await r.del(
      `plinth-auth:signin:e:${sha256Hex(email).slice(0, 32)}`,
      ...ips.map((ip) => `plinth-auth:signin:ip:${ip}`),
    );
    await r.quit();
  });

  it('failures on either instance count toward one limit per email', async () => {
    for (let i = 0; i < 10; i++) {
      const t = i % 2 ? two : one;
      const a = await call(t, 'POST', '/api/auth/signin', {
        body: { email, password: 'password-x' },
        headers: { 'x-forwarded-for': ips[i]! },
      });
      expectError(a, 401, 'INVALID_CREDENTIALS');
    }
    for (const t of [one, two]) {
      const a = await call(t, 'POST', '/api/auth/signin', {
        body: { email, password: 'password-x' },
        headers: { 'x-forwarded-for': ips[10]! },
      });
      expectError(a, 429, 'RATE_LIMITED');
    }
  });
});
