import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { MOCK_USAGE, OpenAiMock, PNG_B64 } from '../helpers/openai-mock.js';
import { FrameReader } from './sse-client.js';

describe.each(backends())('AI images, usage and budget (%s)', (backend) => {
  let mock: OpenAiMock;
  let t: TestApp;
  let alice: Awaited<ReturnType<typeof createTestUser>>;
  let bob: Awaited<ReturnType<typeof createTestUser>>;

  beforeAll(async () => {
    mock = await new OpenAiMock().start();
    // Budget 40 tokens a day: two calls of 18 tokens fit, the third starts at 36 and fits, the fourth is refused.
    t = await startApp(backend, {
      AI_BASE_URL: mock.baseUrl,
      AI_USER_DAILY_TOKENS: '40',
      AI_ALLOW_ANON: 'true',
      AI_DEFAULT_MODEL: 'gpt-default',
    });
    alice = await createTestUser(t, `alice-${Date.now()}@example.com`);
    bob = await createTestUser(t);
  });
  afterAll(async () => {
    await t?.close();
    await mock?.stop();
  });

  const post = (path: string, body: unknown, headers: Record<string, string>) =>
    t.fetch(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const chat = (headers: Record<string, string>, model = 'gpt-default') =>
    post('/api/ai/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }] }, headers);
  const report = async (query = '') => {
    const res = await t.fetch(`/api/ai/usage${query}`, { headers: { 'x-api-key': t.adminKey } });
    expect(res.status).toBe(200);
    return res.json();
  };

  it('generates images with the spec fields and passes n, quality and size through', async () => {
    const res = await post(
      '/api/ai/images/generations',
      { model: 'img-1', prompt: 'a red fox', size: '512x512', n: 2, quality: 'high' },
      bob.auth,
    );
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.created).toBe(1700000000);
    expect(body.data).toHaveLength(2);
    expect(body.data[0].b64_json).toBe(PNG_B64);
    expect(mock.last('/v1/images/generations')!.body).toEqual({
      model: 'img-1',
      prompt: 'a red fox',
      size: '512x512',
      n: 2,
      quality: 'high',
    });
  });

  it.each([
    ['a size that is not WxH', { prompt: 'x', size: 'large' }],
    ['a size with a zero', { prompt: 'x', size: '0x512' }],
    ['a size with spaces', { prompt: 'x', size: '512 x 512' }],
    ['no prompt', { size: '512x512' }],
    ['an empty prompt', { prompt: '' }],
    ['a prompt that is not a string', { prompt: ['x'] }],
    ['n out of range', { prompt: 'x', n: 0 }],
  ])('refuses %s with 400', async (_name, body) => {
    const res = await post('/api/ai/images/generations', { model: 'img-1', ...body }, bob.auth);
    expect(res.status).toBe(400);
    expect((await res.json()).error).toBe('INVALID_INPUT');
  });

  it('maps image upstream errors like chat ones', async () => {
    const res = await post('/api/ai/images/generations', { model: 'mock-400', prompt: 'x' }, bob.auth);
    expect(res.status).toBe(400);
    expect((await res.json()).message).toMatch(/temperature/);
    const bad = await post('/api/ai/images/generations', { model: 'mock-shape', prompt: 'x' }, bob.auth);
    expect(bad.status).toBe(502);
  });

  it('lets anon callers in when AI_ALLOW_ANON=true', async () => {
    expect((await chat({ apikey: t.anonKey })).status).toBe(200);
  });

  it('refuses a user whose daily budget is spent with 429 and Retry-After, other users unaffected', async () => {
    for (let i = 0; i < 3; i++) expect((await chat(alice.auth)).status).toBe(200);
    const res = await chat(alice.auth);
    expect(res.status).toBe(429);
    const err = await res.json();
    expect(err.error).toBe('AI_BUDGET_EXCEEDED');
    expect(err.message).toContain('54');
    const retry = Number(res.headers.get('retry-after'));
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(86_400);
    const imgs = await post('/api/ai/images/generations', { prompt: 'x' }, alice.auth);
    expect(imgs.status).toBe(429);
    const stream = await post(
      '/api/ai/chat/completions',
      { stream: true, messages: [{ role: 'user', content: 'hi' }] },
      alice.auth,
    );
    expect(stream.status).toBe(429);
    const me = async (headers: Record<string, string>) => (await t.fetch('/api/ai/usage/me', { headers })).json();
    const today = new Date().toISOString().slice(0, 10);
    expect(await me(alice.auth)).toEqual({ date: today, totalTokens: 54, budget: 40, remaining: 0 });
    expect(await me({ apikey: t.anonKey })).toEqual({ date: today, totalTokens: 18, budget: 40, remaining: 22 });
    expect((await me({ 'x-api-key': t.adminKey })).budget).toBeNull();
    // Bob and admins are not affected.
    expect((await chat(bob.auth)).status).toBe(200);
    expect((await chat({ 'x-api-key': t.adminKey })).status).toBe(200);
  });

  it('counts only today (UTC) against the budget', async () => {
    await t.deps.db.query(
      `update ai.usage set created_at = now() - interval '1 day' - interval '1 hour' where user_id = $1`,
      [alice.userId],
    );
    expect((await chat(alice.auth)).status).toBe(200);
  });

  it('sums every call per user and model for admins', async () => {
    const frames = await new FrameReader(
      await post(
        '/api/ai/chat/completions',
        { model: 'gpt-stream', stream: true, messages: [{ role: 'user', content: 'hi' }] },
        bob.auth,
      ),
    ).all();
    expect(frames.at(-1)).toBe('[DONE]');
    expect((await chat(bob.auth, 'mock-500')).status).toBe(502);

    const all = await report();
    const line = (userId: string | null, model: string, caller = 'user') =>
      all.usage.find(
        (u: { userId: string | null; model: string; caller: string }) =>
          u.userId === userId && u.model === model && u.caller === caller,
      );
    expect(line(alice.userId, 'gpt-default')).toMatchObject({
      email: alice.email,
      requests: 4,
      errors: 0,
      promptTokens: 4 * MOCK_USAGE.prompt_tokens,
      totalTokens: 4 * MOCK_USAGE.total_tokens,
    });
    expect(line(bob.userId, 'img-1')).toMatchObject({ requests: 1, images: 2, totalTokens: 0 });
    expect(line(bob.userId, 'gpt-stream')).toMatchObject({ requests: 1, totalTokens: MOCK_USAGE.total_tokens });
    expect(line(bob.userId, 'mock-500')).toMatchObject({ requests: 1, errors: 1, totalTokens: 0 });
    expect(line(null, 'gpt-default', 'anon')).toMatchObject({ requests: 1, totalTokens: MOCK_USAGE.total_tokens });
    expect(line(null, 'gpt-default', 'admin')).toMatchObject({ requests: 1 });
    expect(all.totals.requests).toBe(all.usage.reduce((n: number, u: { requests: number }) => n + u.requests, 0));
    expect(all.totals.images).toBe(2);
    // Refused calls (validation, budget) never reached the upstream and are not usage.
    expect(all.usage.some((u: { model: string }) => u.model === '')).toBe(false);

    const bobOnly = await report(`?userId=${bob.userId}`);
    expect(bobOnly.usage.every((u: { userId: string }) => u.userId === bob.userId)).toBe(true);
    const future = await report(`?from=${encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString())}`);
    expect(future.usage).toEqual([]);
    expect(future.totals.requests).toBe(0);
  });

  it('keeps the usage report for admins only and checks its query', async () => {
    expect((await t.fetch('/api/ai/usage', { headers: bob.auth })).status).toBe(403);
    expect((await t.fetch('/api/ai/usage')).status).toBe(401);
    expect((await t.fetch('/api/ai/usage?userId=not-a-uuid', { headers: { 'x-api-key': t.adminKey } })).status).toBe(
      400,
    );
    expect((await t.fetch('/api/ai/usage?from=yesterday', { headers: { 'x-api-key': t.adminKey } })).status).toBe(400);
  });

  it('records a call even when its user is deleted before the row is written, and a NUL in the model', async () => {
    const dave = await createTestUser(t);
    expect((await chat(dave.auth, 'gpt-dave')).status).toBe(200);
    expect((await chat(bob.auth, 'gpt-\u0000nul')).status).toBe(200);
    await t.deps.db.query('delete from auth.users where id = $1', [dave.userId]);
    const all = await report();
    expect(all.usage.find((u: { model: string }) => u.model === 'gpt-dave')).toMatchObject({
      userId: null,
      requests: 1,
    });
    expect(all.usage.find((u: { model: string }) => u.model === 'gpt-nul')).toMatchObject({
      userId: bob.userId,
      requests: 1,
    });
  });

  it('keeps usage when a user is deleted', async () => {
    const carol = await createTestUser(t);
    expect((await chat(carol.auth, 'gpt-carol')).status).toBe(200);
    await t.deps.ai.flush();
    await t.deps.db.query('delete from auth.users where id = $1', [carol.userId]);
    const all = await report();
    expect(all.usage.find((u: { model: string }) => u.model === 'gpt-carol')).toMatchObject({
      userId: null,
      requests: 1,
    });
  });
});
