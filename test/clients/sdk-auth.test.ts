import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createClient } from '@insforge/sdk';
import { generateSync } from 'otplib';
import { backends } from '../helpers/db.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { startSmtp } from '../auth/smtp.js';
import { USER_SHAPE, uniqueEmail } from '../auth/util.js';
import { sdk, signedInClient } from './helpers.js';

// The InsForge SDK's auth module (wire doc section 2) against a real Plinth over HTTP.
describe.each(backends())('@insforge/sdk auth (%s)', (backend) => {
  let t: TestApp;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  beforeAll(async () => {
    smtp = await startSmtp();
    // TOKEN_TTL at its minimum, so the refresh test only moves the clock 60 s forward.
    t = await startApp(backend, { SMTP_URL: smtp.url, TOKEN_TTL: '30' });
    const b = await call(t, 'POST', '/api/storage/buckets', {
      headers: { 'x-api-key': t.adminKey },
      body: { bucketName: 'sdkauth', isPublic: false },
    });
    expect(b.status).toBeLessThan(300);
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('signUp signs in at once: the SDK keeps the session, getCurrentUser answers it from memory', async () => {
    const client = sdk(t);
    const email = uniqueEmail('sdk-up');
    const { data, error } = await client.auth.signUp({ email, password: 'password-1', name: 'Ada' });
    expect(error).toBeNull();
    expect(data).toMatchObject({
      accessToken: expect.stringMatching(/^ey/),
      refreshToken: expect.stringMatching(/^rt_/),
      requireEmailVerification: false,
    });
    expect(data!.user).toEqual({ ...USER_SHAPE, email, emailVerified: false, profile: { name: 'Ada' } });
    const me = await client.auth.getCurrentUser();
    expect(me.data?.user?.id).toBe(data!.user!.id);
    // A second sign-up with the address is a clear error, returned (not thrown).
    const again = await sdk(t).auth.signUp({ email, password: 'password-1' });
    expect(again.data).toBeNull();
    expect(again.error).toMatchObject({ statusCode: 409, error: 'ALREADY_EXISTS' });
  });

  it('signInWithPassword: right password gives a session; wrong one is INVALID_CREDENTIALS 401', async () => {
    const { email, password, user } = await signedInClient(t, 'sdk-in');
    const client = sdk(t);
    const bad = await client.auth.signInWithPassword({ email, password: 'wrong-password' });
    expect(bad.data).toBeNull();
    expect(bad.error).toMatchObject({ statusCode: 401, error: 'INVALID_CREDENTIALS' });
    const good = await client.auth.signInWithPassword({ email, password });
    expect(good.error).toBeNull();
    expect(good.data).toMatchObject({
      user: { id: user.id, email, providers: ['email'] },
      accessToken: expect.any(String),
    });
  });

  it('signInWithPassword of a user with MFA: the SDK gets the challenge and keeps no session; the challenge gives an aal2 token it can use', async () => {
    const { email, password, accessToken } = await signedInClient(t, 'sdk-mfa');
    const e = await call(t, 'POST', '/api/auth/mfa/factors', { token: accessToken, body: {} });
    const base = Math.floor(Date.now() / 30_000) * 30 + 1;
    const v = await call(t, 'POST', `/api/auth/mfa/factors/${e.body.id}/verify`, {
      token: accessToken,
      body: { code: generateSync({ secret: e.body.secret, epoch: base }) },
    });
    expect(v.status).toBe(200);
    const client = sdk(t);
    const first = await client.auth.signInWithPassword({ email, password });
    expect(first.error).toBeNull();
    expect(first.data).toMatchObject({
      mfaRequired: true,
      challenge: { token: expect.any(String), factors: [{ id: e.body.id, type: 'totp' }] },
    });
    expect((await client.auth.getCurrentUser()).data?.user ?? null).toBeNull();
    const second = await call(t, 'POST', '/api/auth/mfa/challenge', {
      body: {
        token: (first.data as any).challenge.token,
        factorId: e.body.id,
        code: generateSync({ secret: e.body.secret, epoch: base + 30 }),
      },
    });
    expect(second.status).toBe(200);
    const server = createClient({ baseUrl: t.url, accessToken: second.body.accessToken, retryCount: 0 });
    expect((await server.auth.getCurrentUser()).data?.user).toMatchObject({
      email,
      factors: [{ id: e.body.id, status: 'verified' }],
    });
  });

  it('server mode: getCurrentUser calls GET /api/auth/sessions/current; the admin key gets user null', async () => {
    const { accessToken, user } = await signedInClient(t, 'sdk-srv');
    const server = createClient({ baseUrl: t.url, accessToken, retryCount: 0 });
    const me = await server.auth.getCurrentUser();
    expect(me.error).toBeNull();
    expect(me.data?.user).toMatchObject({ id: user.id, email: user.email });
    const admin = await createClient({ baseUrl: t.url, accessToken: t.adminKey, retryCount: 0 }).auth.getCurrentUser();
    expect(admin).toMatchObject({ data: { user: null }, error: null });
  });

  it('signOut ends the session: the old token is then AUTH_UNAUTHORIZED everywhere', async () => {
    const { client, accessToken } = await signedInClient(t, 'sdk-out');
    expect((await call(t, 'GET', '/api/auth/sessions/current', { token: accessToken })).status).toBe(200);
    expect(await client.auth.signOut()).toEqual({ error: null });
    expect((await client.auth.getCurrentUser()).data?.user ?? null).toBeNull();
    const after = await call(t, 'GET', '/api/auth/sessions/current', { token: accessToken });
    expect(after.status).toBe(401);
    expect(after.body.error).toBe('AUTH_UNAUTHORIZED');
    // A garbled token stays INVALID_TOKEN: refreshing would not help it.
    expect((await call(t, 'GET', '/api/auth/sessions/current', { token: `${accessToken}x` })).body.error).toBe(
      'INVALID_TOKEN',
    );
  });

  it('an expired access token is refreshed by the SDK and the call retried once, transparently', async () => {
    const { client, accessToken } = await signedInClient(t, 'sdk-exp');
    // The server runs in this process: move its clock past the 30 s token life.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 60_000 });
    const direct = await call(t, 'POST', '/api/storage/buckets/sdkauth/upload-strategy', {
      token: accessToken,
      body: { filename: 'x.txt' },
    });
    expect(direct.status).toBe(401);
    expect(direct.body.error).toBe('AUTH_UNAUTHORIZED');
    const seen: string[] = [];
    client.auth.onAuthStateChange((event) => {
      seen.push(event);
    });
    const up = await client.storage
      .from('sdkauth')
      .upload('after-refresh.txt', new Blob(['fresh'], { type: 'text/plain' }));
    expect(up.error).toBeNull();
    expect(up.data).toMatchObject({ key: 'after-refresh.txt', size: 5 });
    expect(seen).toContain('tokenRefreshed');
    const now = (await client.auth.getCurrentUser()).data?.user;
    expect(now?.email).toMatch(/^sdk-exp/);
  });

  it('a client whose token expired can still sign in (the stale token it sends along is ignored); a forged one is not', async () => {
    const { client, email, password } = await signedInClient(t, 'sdk-stale');
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 60_000 });
    const again = await client.auth.signInWithPassword({ email, password });
    expect(again.error).toBeNull();
    expect(again.data?.accessToken).toMatch(/^ey/);
    expect((await client.auth.getPublicAuthConfig()).error).toBeNull();
    vi.useRealTimers();
    const forged = await call(t, 'POST', '/api/auth/sessions', {
      token: `${again.data!.accessToken}x`,
      body: { email, password },
    });
    expect(forged.status).toBe(401);
    expect(forged.body.error).toBe('INVALID_TOKEN');
  });

  it('a database read with an expired token is refreshed and retried too (postgrest-js through the SDK)', async () => {
    const admin = { 'x-api-key': t.adminKey };
    const made = await call(t, 'POST', '/api/database/tables', {
      headers: admin,
      body: { tableName: 'sdk_notes', columns: [{ name: 'body', type: 'string', nullable: false }] },
    });
    expect(made.status).toBe(201);
    expect(
      (await call(t, 'POST', '/api/database/records/sdk_notes', { headers: admin, body: [{ body: 'hello' }] })).status,
    ).toBeLessThan(300);
    const { client } = await signedInClient(t, 'sdk-db');
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 60_000 });
    const seen: string[] = [];
    client.auth.onAuthStateChange((event) => {
      seen.push(event);
    });
    const { data, error, status } = await client.database.from('sdk_notes').select('body');
    expect(error).toBeNull();
    expect(status).toBe(200);
    expect(data).toEqual([{ body: 'hello' }]);
    expect(seen).toContain('tokenRefreshed');
  });

  it('signOut with an expired token still ends the session on the server', async () => {
    const { client, refreshToken } = await signedInClient(t, 'sdk-out-exp');
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 60_000 });
    expect(await client.auth.signOut()).toEqual({ error: null });
    vi.useRealTimers();
    const r = await call(t, 'POST', '/api/auth/refresh', { body: { refreshToken } });
    expect(r.status).toBe(401);
    expect(r.body.error).toBe('INVALID_REFRESH_TOKEN');
    // A forged token cannot end anything.
    const forged = await call(t, 'POST', '/api/auth/logout', {
      token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl',
    });
    expect(forged.status).toBe(401);
  });

  it('refreshSession in server mode sends refresh_token; a spent one is refused', async () => {
    const { refreshToken, accessToken } = await signedInClient(t, 'sdk-rs');
    const server = createClient({ baseUrl: t.url, accessToken, retryCount: 0 });
    const r = await server.auth.refreshSession({ refreshToken });
    expect(r.error).toBeNull();
    expect(r.data).toMatchObject({
      accessToken: expect.any(String),
      refreshToken: expect.stringMatching(/^rt_/),
      user: { email: expect.any(String) },
    });
    const spent = await createClient({ baseUrl: t.url, accessToken, retryCount: 0 }).auth.refreshSession({
      refreshToken,
    });
    expect(spent.error).toMatchObject({ statusCode: 401, error: 'INVALID_REFRESH_TOKEN' });
  });

  it('profiles: setProfile merges into the own profile, getProfile reads anyone by id (no email)', async () => {
    const { client, user } = await signedInClient(t, 'sdk-prof');
    const set = await client.auth.setProfile({ name: 'Grace', avatar_url: 'https://example.com/g.png', bio: 'hi' });
    expect(set.error).toBeNull();
    expect(set.data).toEqual({
      id: user.id,
      profile: { name: 'Grace', avatar_url: 'https://example.com/g.png', bio: 'hi' },
    });
    const other = sdk(t);
    const got = await other.auth.getProfile(user.id);
    expect(got).toEqual({
      data: { id: user.id, profile: { name: 'Grace', avatar_url: 'https://example.com/g.png', bio: 'hi' } },
      error: null,
    });
    const removed = await client.auth.setProfile({ bio: null });
    expect(removed.data?.profile).toEqual({ name: 'Grace', avatar_url: 'https://example.com/g.png' });
    expect((await other.auth.getProfile('00000000-0000-4000-8000-000000000000')).error).toMatchObject({
      statusCode: 404,
      error: 'USER_NOT_FOUND',
    });
    // The anon key cannot set a profile.
    expect((await other.auth.setProfile({ name: 'x' })).error).toMatchObject({ statusCode: 403 });
  });

  it('getPublicAuthConfig answers the sign-in settings', async () => {
    const { data, error } = await sdk(t).auth.getPublicAuthConfig();
    expect(error).toBeNull();
    expect(data).toMatchObject({
      requireEmailVerification: false,
      passwordMinLength: 8,
      verifyEmailMethod: 'code',
      oAuthProviders: [],
    });
  });

  it('email verification: resendVerificationEmail mails a code, verifyEmail signs in and marks the address verified', async () => {
    const { email } = await signedInClient(t, 'sdk-ver');
    const client = sdk(t);
    expect((await client.auth.resendVerificationEmail({ email })).data).toMatchObject({ success: true });
    const otp = await smtp.waitForCode(email);
    const wrong = await client.auth.verifyEmail({ email, otp: otp === '000000' ? '111111' : '000000' });
    expect(wrong.error).toMatchObject({ statusCode: 400, error: 'INVALID_CODE' });
    const v = await client.auth.verifyEmail({ email, otp });
    expect(v.error).toBeNull();
    expect(v.data).toMatchObject({ user: { email, emailVerified: true }, accessToken: expect.any(String) });
    expect((await client.auth.getCurrentUser()).data?.user?.emailVerified).toBe(true);
  });

  it('OTP sign-in: signInWithOtp mails a code, verifyOtp trades it for a session once', async () => {
    const { email } = await signedInClient(t, 'sdk-otp');
    const client = sdk(t);
    expect((await client.auth.signInWithOtp({ email })).data).toMatchObject({ success: true });
    const otp = await smtp.waitForCode(email);
    const s = await client.auth.verifyOtp({ email, otp });
    expect(s.error).toBeNull();
    expect(s.data).toMatchObject({ user: { email, emailVerified: true }, accessToken: expect.any(String) });
    expect((await sdk(t).auth.verifyOtp({ email, otp })).error).toMatchObject({
      statusCode: 400,
      error: 'INVALID_CODE',
    });
    // Unknown addresses get the same answer and no mail.
    expect((await client.auth.signInWithOtp({ email: uniqueEmail('nobody') })).data).toMatchObject({ success: true });
  });

  it('password reset: code by mail, exchanged for a one-time token, which sets the new password and ends old sessions', async () => {
    const { email, accessToken } = await signedInClient(t, 'sdk-reset');
    const client = sdk(t);
    expect((await client.auth.sendResetPasswordEmail({ email })).data).toMatchObject({ success: true });
    const code = await smtp.waitForCode(email);
    const x = await client.auth.exchangeResetPasswordToken({ email, code });
    expect(x.error).toBeNull();
    expect(x.data).toEqual({ token: expect.stringMatching(/^rpt_/), expiresAt: expect.any(String) });
    expect((await client.auth.exchangeResetPasswordToken({ email, code })).error).toMatchObject({
      error: 'INVALID_CODE',
    });
    const r = await client.auth.resetPassword({ newPassword: 'password-new', otp: x.data!.token });
    expect(r.error).toBeNull();
    expect((await client.auth.resetPassword({ newPassword: 'password-3', otp: x.data!.token })).error).toMatchObject({
      statusCode: 400,
      error: 'INVALID_CODE',
    });
    expect((await sdk(t).auth.signInWithPassword({ email, password: 'password-1' })).error).toMatchObject({
      error: 'INVALID_CREDENTIALS',
    });
    expect((await sdk(t).auth.signInWithPassword({ email, password: 'password-new' })).error).toBeNull();
    expect((await call(t, 'GET', '/api/auth/sessions/current', { token: accessToken })).body.error).toBe(
      'AUTH_UNAUTHORIZED',
    );
  });

  it('POST /api/auth/users with the admin key creates a user without a session; the anon key signs up', async () => {
    const email = uniqueEmail('made');
    const made = await call(t, 'POST', '/api/auth/users', {
      headers: { 'x-api-key': t.adminKey },
      body: { email, password: 'password-1', emailVerified: true },
    });
    expect(made.status).toBe(201);
    expect(made.body).toEqual({ user: { ...USER_SHAPE, email, emailVerified: true, profile: {} } });
    const signIn = await sdk(t).auth.signInWithPassword({ email, password: 'password-1' });
    expect(signIn.error).toBeNull();
    // emailVerified from a non-admin is ignored: the anon key signs up, unverified.
    const anon = await call(t, 'POST', '/api/auth/users', {
      token: t.anonKey,
      body: { email: uniqueEmail('self'), password: 'password-1', emailVerified: true },
    });
    expect(anon.status).toBe(200);
    expect(anon.body.user.emailVerified).toBe(false);
    expect(anon.body.accessToken).toMatch(/^ey/);
  });
});
