import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { HUGE_USAGE, MOCK_USAGE, OpenAiMock } from '../helpers/openai-mock.js';
import { FrameReader, streamedText } from './sse-client.js';

describe.each(backends())('AI chat streaming (%s)', (backend) => {
  let mock: OpenAiMock;
  let t: TestApp;
  let user: Awaited<ReturnType<typeof createTestUser>>;

  beforeAll(async () => {
    mock = await new OpenAiMock('sk-stream-key').start();
    t = await startApp(backend, { AI_BASE_URL: mock.baseUrl, AI_API_KEY: 'sk-stream-key', AI_TIMEOUT_MS: '1500' });
    user = await createTestUser(t);
  });
  afterAll(async () => {
    await t?.close();
    await mock?.stop();
  });

  const stream = (model: string, extra: Record<string, unknown> = {}, signal?: AbortSignal) =>
    t.fetch('/api/ai/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...user.auth },
      body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'Say hello' }], ...extra }),
      signal,
    });

  /** The usage row of the last call with this model (and streamed or not, if given), once it is written. */
  async function usageRow(model: string, stream?: boolean): Promise<Record<string, unknown>> {
    for (let i = 0; i < 100; i++) {
      await t.deps.ai.flush();
      const { rows } = await t.deps.db.query(
        'select * from ai.usage where model = $1 and ($2::boolean is null or stream = $2) order by id desc limit 1',
        [model, stream ?? null],
      );
      if (rows[0]) return rows[0];
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no usage row for ${model}`);
  }

  it('answers OpenAI chunks as Server-Sent Events ending with [DONE]', async () => {
    const res = await stream('gpt-stream', { temperature: 0.5, max_tokens: 20 });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const frames = await new FrameReader(res).all();
    expect(frames.at(-1)).toBe('[DONE]');
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f));
    for (const c of chunks)
      expect(c).toMatchObject({ id: 'chatcmpl-mockstream', object: 'chat.completion.chunk', model: 'gpt-stream' });
    expect(streamedText(frames)).toBe('Hello world');
    expect(chunks.at(-1).choices[0].finish_reason).toBe('stop');
    // Plinth asked for usage; the client did not, so the usage-only chunk is not forwarded.
    expect(chunks.every((c) => c.choices.length > 0)).toBe(true);
    const sent = mock.last()!;
    expect(sent.body).toMatchObject({
      model: 'gpt-stream',
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.5,
      max_tokens: 20,
    });
    expect(sent.headers.authorization).toBe('Bearer sk-stream-key');
    const row = await usageRow('gpt-stream');
    expect(row).toMatchObject({
      status: 200,
      stream: true,
      prompt_tokens: 11,
      completion_tokens: 7,
      total_tokens: 18,
      estimated: false,
    });
  });

  it('reuses the upstream connection after a complete stream, even when its end comes after [DONE]', async () => {
    const settle = () => new Promise((r) => setTimeout(r, 100)); // the body's end is read in the background
    await new FrameReader(await stream('mock-late-end')).all();
    await settle();
    const before = mock.connections;
    for (let i = 0; i < 3; i++) {
      expect((await new FrameReader(await stream('mock-late-end')).all()).at(-1)).toBe('[DONE]');
      await settle();
    }
    expect(mock.connections).toBe(before);
  });

  it('forwards the usage chunk when the client asks for it', async () => {
    const res = await stream('gpt-stream-usage', { stream_options: { include_usage: true } });
    const frames = await new FrameReader(res).all();
    const last = JSON.parse(frames.at(-2)!);
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual(MOCK_USAGE);
  });

  it('flushes each chunk as it arrives', async () => {
    const res = await stream('mock-gated');
    expect(res.status).toBe(200);
    const reader = new FrameReader(res);
    // The upstream holds the rest back until release(): this read only returns if Plinth
    // passed the first chunks on without waiting for the end.
    while (streamedText(reader.frames) !== 'Hel') expect(await reader.next()).not.toBeNull();
    mock.release();
    const frames = await reader.all();
    expect(streamedText(frames)).toBe('Hello world');
    expect(frames.at(-1)).toBe('[DONE]');
  });

  it('stops the upstream call when the client disconnects mid-stream', async () => {
    const abortedBefore = mock.aborted;
    const ac = new AbortController();
    const res = await stream('mock-hang-mid', {}, ac.signal);
    const reader = new FrameReader(res);
    await reader.next();
    ac.abort();
    await mock.waitForAborts(abortedBefore + 1);
    // 499, not 504: it was the client's disconnect, not the 1.5 s idle timeout, that ended it.
    const row = await usageRow('mock-hang-mid');
    expect(row.status).toBe(499);
    expect(row.estimated).toBe(true);
    expect(Number(row.prompt_tokens)).toBeGreaterThan(0);
  });

  it('stops the upstream call when the client disconnects before a JSON answer', async () => {
    const abortedBefore = mock.aborted;
    const ac = new AbortController();
    const pending = t
      .fetch('/api/ai/chat/completions', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...user.auth },
        body: JSON.stringify({ model: 'mock-hang', messages: [{ role: 'user', content: 'hi' }] }),
        signal: ac.signal,
      })
      .catch((e) => e);
    while (mock.last()?.body?.model !== 'mock-hang') await new Promise((r) => setTimeout(r, 10));
    ac.abort();
    await pending;
    await mock.waitForAborts(abortedBefore + 1);
    expect(await usageRow('mock-hang', false)).toMatchObject({
      status: 499,
      estimated: true,
      prompt_tokens: 1,
      total_tokens: 1,
    });
  });

  it('estimates the prompt of a stream the client hangs up on before the upstream answers', async () => {
    const abortedBefore = mock.aborted;
    const requestsBefore = mock.requests.length;
    const ac = new AbortController();
    const pending = t
      .fetch('/api/ai/chat/completions', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...user.auth },
        body: JSON.stringify({
          model: 'mock-hang',
          stream: true,
          messages: [{ role: 'user', content: 'x'.repeat(40_000) }],
        }),
        signal: ac.signal,
      })
      .catch((e) => e);
    while (mock.requests.length === requestsBefore) await new Promise((r) => setTimeout(r, 10));
    ac.abort();
    await pending;
    await mock.waitForAborts(abortedBefore + 1);
    const row = await usageRow('mock-hang', true);
    expect(row).toMatchObject({
      status: 499,
      estimated: true,
      prompt_tokens: 10_000,
      completion_tokens: 0,
      total_tokens: 10_000,
    });
  });

  it('treats usage beyond any model (10^15 tokens) as not reported, and estimates it', async () => {
    const frames = await new FrameReader(await stream('mock-huge-usage')).all();
    expect(frames.at(-1)).toBe('[DONE]');
    expect(await usageRow('mock-huge-usage', true)).toMatchObject({
      status: 200,
      estimated: true,
      prompt_tokens: 3,
      completion_tokens: 3,
      total_tokens: 6,
    });
    const res = await t.fetch('/api/ai/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...user.auth },
      body: JSON.stringify({ model: 'mock-huge-usage', messages: [{ role: 'user', content: 'Say hello' }] }),
    });
    expect(res.status).toBe(200);
    // The client sees the same estimate that is recorded, not a number the budget cannot hold.
    const { usage } = await res.json();
    expect(usage.prompt_tokens).toBe(3);
    expect(usage.total_tokens).not.toBe(HUGE_USAGE.total_tokens);
    expect(await usageRow('mock-huge-usage', false)).toMatchObject({
      estimated: true,
      prompt_tokens: 3,
      total_tokens: usage.total_tokens,
    });
  });

  it.each([
    ['a connection that breaks', 'mock-broken', 'AI_UPSTREAM_ERROR', 'Hel'],
    ['a chunk that is not JSON', 'mock-malformed', 'AI_UPSTREAM_ERROR', 'Hel'],
    ['an error event', 'mock-error-event', 'AI_UPSTREAM_ERROR', 'Hel'],
    ['an end without [DONE] or finish_reason', 'mock-nodone', 'AI_UPSTREAM_ERROR', 'Hello world'],
    ['silence longer than AI_TIMEOUT_MS', 'mock-hang-mid', 'AI_UPSTREAM_TIMEOUT', 'Hel'],
  ])('ends with an error event after %s mid-stream, and records it', async (_name, model, code, text) => {
    const res = await stream(model);
    expect(res.status).toBe(200);
    const frames = await new FrameReader(res).all();
    expect(streamedText(frames.slice(0, -1))).toBe(text);
    expect(frames).not.toContain('[DONE]');
    const last = JSON.parse(frames.at(-1)!);
    expect(last.error).toMatchObject({ code, type: 'upstream_error' });
    expect(last.error.message).toBeTruthy();
    const row = await usageRow(model);
    expect(row.error).toBe(code);
    expect(row.status).toBe(code === 'AI_UPSTREAM_TIMEOUT' ? 504 : 502);
  });

  it('estimates usage when the upstream sends no usage chunk', async () => {
    const frames = await new FrameReader(await stream('mock-nousage')).all();
    expect(frames.at(-1)).toBe('[DONE]');
    const row = await usageRow('mock-nousage');
    expect(row).toMatchObject({
      status: 200,
      estimated: true,
      prompt_tokens: 3,
      completion_tokens: 3,
      total_tokens: 6,
    });
  });

  it.each([
    ['an upstream 400', 'mock-400', 400, 'AI_UPSTREAM_REJECTED'],
    ['an upstream 500', 'mock-500', 502, 'AI_UPSTREAM_ERROR'],
    ['a JSON answer to a stream request', 'mock-json-for-stream', 502, 'AI_UPSTREAM_ERROR'],
  ])('answers %s before the stream starts as a JSON error', async (_name, model, status, code) => {
    const res = await stream(model);
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect((await res.json()).error).toBe(code);
  });

  it('survives many parallel streams, some of them broken', async () => {
    const models = ['gpt-a', 'mock-broken', 'mock-slow', 'mock-malformed', 'gpt-b', 'mock-nodone'];
    const results = await Promise.all(models.map(async (m) => new FrameReader(await stream(m)).all()));
    expect(results[0]!.at(-1)).toBe('[DONE]');
    expect(streamedText(results[2]!)).toBe('Hello world');
    const health = await t.fetch('/api/health');
    expect(health.status).toBe(200);
  });
});
