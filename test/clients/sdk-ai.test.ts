import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { backends } from '../helpers/db.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { MOCK_USAGE, OpenAiMock, PNG_B64, STREAM_PARTS, mockVector } from '../helpers/openai-mock.js';
import { sdk, signedInClient } from './helpers.js';

const KEY = 'sk-test-plinth-upstream-key-sdk';

// The InsForge SDK's AI module (wire doc section 6) and the openai package, against a real
// Plinth whose upstream is the OpenAI mock (the one mock allowed: a paid API).
describe.each(backends())('@insforge/sdk and openai AI calls (%s)', (backend) => {
  let mock: OpenAiMock;
  let t: TestApp;
  let user: Awaited<ReturnType<typeof signedInClient>>;
  beforeAll(async () => {
    mock = await new OpenAiMock(KEY).start();
    t = await startApp(backend, { AI_BASE_URL: mock.baseUrl, AI_API_KEY: KEY });
    user = await signedInClient(t, 'ai');
  });
  afterAll(async () => {
    await t?.close();
    await mock?.stop();
  });

  it('chat.completions.create: InsForge shape on the wire, camelCase options mapped to OpenAI upstream', async () => {
    const r = await user.client.ai.chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'Hi there' }],
      maxTokens: 20,
      topP: 0.5,
      webSearch: { enabled: true },
    } as never);
    expect(r).toMatchObject({
      object: 'chat.completion',
      model: 'gpt-test',
      choices: [{ index: 0, message: { role: 'assistant', content: 'echo: Hi there' }, finish_reason: 'stop' }],
      usage: {
        promptTokens: MOCK_USAGE.prompt_tokens,
        completionTokens: MOCK_USAGE.completion_tokens,
        totalTokens: MOCK_USAGE.total_tokens,
      },
    });
    const sent = mock.last()!.body!;
    expect(sent).toMatchObject({ model: 'gpt-test', max_tokens: 20, top_p: 0.5 });
    expect(sent).not.toHaveProperty('maxTokens');
    expect(sent).not.toHaveProperty('webSearch');
    // The raw answer is InsForge's {text, metadata}.
    const raw = await call(t, 'POST', '/api/ai/chat/completion', {
      token: user.accessToken,
      body: { model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] },
    });
    expect(raw.body).toEqual({
      text: 'echo: x',
      metadata: { model: 'gpt-test', usage: { promptTokens: 11, completionTokens: 7, totalTokens: 18 } },
    });
  });

  it('tool calls come back as tool_calls with finish_reason tool_calls', async () => {
    const r = await user.client.ai.chat.completions.create({
      model: 'mock-tools',
      messages: [{ role: 'user', content: 'weather?' }],
    });
    expect(r.choices[0].finish_reason).toBe('tool_calls');
    expect(r.choices[0].message.tool_calls[0]).toMatchObject({ id: 'call_1', function: { name: 'get_weather' } });
  });

  it('stream: true yields the text in chunks and ends on {"done": true}', async () => {
    const stream = await user.client.ai.chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
    });
    const parts: string[] = [];
    for await (const chunk of stream as AsyncIterable<{ choices: Array<{ delta: { content?: string } }> }>) {
      if (chunk.choices[0]?.delta.content) parts.push(chunk.choices[0].delta.content);
    }
    expect(parts).toEqual(STREAM_PARTS);
    const raw = await t.fetch('/api/ai/chat/completion', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${user.accessToken}` },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }], stream: true }),
    });
    expect(raw.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await raw.text();
    expect(text).toBe(
      `${STREAM_PARTS.map((p) => `data: ${JSON.stringify({ chunk: p })}\n\n`).join('')}data: {"done":true}\n\n`,
    );
  });

  it('a refused call throws: the anon key is not enough for AI', async () => {
    await expect(
      sdk(t).ai.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({ statusCode: 403, error: 'FORBIDDEN' });
    await expect(
      sdk(t).ai.chat.completions.create({
        model: 'gpt-test',
        messages: [{ role: 'user', content: 'x' }],
        stream: true,
      }),
    ).rejects.toThrow('FORBIDDEN');
  });

  it('images.generate: data URIs on the wire, b64_json for the SDK', async () => {
    const r = await user.client.ai.images.generate({ model: 'img-test', prompt: 'a cat' });
    expect(r.data).toEqual([{ b64_json: PNG_B64, content: 'a cat' }]);
    const raw = await call(t, 'POST', '/api/ai/image/generation', {
      token: user.accessToken,
      body: { model: 'img-test', prompt: 'a dog' },
    });
    expect(raw.body).toEqual({
      text: 'a dog',
      images: [{ type: 'imageUrl', imageUrl: `data:image/png;base64,${PNG_B64}` }],
      metadata: { model: 'img-test' },
    });
    const edit = await call(t, 'POST', '/api/ai/image/generation', {
      token: user.accessToken,
      body: { model: 'img-test', prompt: 'x', images: [{ url: 'https://example.com/a.png' }] },
    });
    expect(edit.status).toBe(400);
    expect(edit.body.error).toBe('INVALID_INPUT');
  });

  it('embeddings.create (SDK): OpenAI list plus metadata; usage is recorded like chat', async () => {
    const r = await user.client.ai.embeddings.create({ model: 'emb-test', input: ['first text', 'second'] });
    expect(r.data).toEqual([
      { object: 'embedding', index: 0, embedding: mockVector(0) },
      { object: 'embedding', index: 1, embedding: mockVector(1) },
    ]);
    // The SDK builds model and usage from InsForge's metadata.
    expect(r).toMatchObject({ object: 'list', model: 'emb-test', usage: { prompt_tokens: 5, total_tokens: 5 } });
    const raw = await call(t, 'POST', '/api/ai/embeddings', {
      token: user.accessToken,
      body: { model: 'emb-test', input: 'first text' },
    });
    expect(raw.body.metadata).toEqual({ model: 'emb-test', usage: { promptTokens: 3, totalTokens: 3 } });
    expect(raw.body.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
    const report = await call(t, 'GET', '/api/ai/usage', { headers: { 'x-api-key': t.adminKey } });
    const line = report.body.usage.find((u: { model: string }) => u.model === 'emb-test');
    expect(line).toMatchObject({ userId: user.user.id, requests: 2, promptTokens: 8, totalTokens: 8, errors: 0 });
  });

  it('the openai package works with baseURL <plinth>/api/ai: chat, images, embeddings (base64 by default)', async () => {
    const client = new OpenAI({ apiKey: user.accessToken, baseURL: `${t.url}/api/ai`, maxRetries: 0 });
    const chat = await client.chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'Hey' }],
    });
    expect(chat.choices[0]!.message.content).toBe('echo: Hey');
    expect(chat.usage).toMatchObject(MOCK_USAGE);
    const stream = await client.chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'Hey' }],
      stream: true,
    });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    expect(text).toBe(STREAM_PARTS.join(''));
    const img = await client.images.generate({ model: 'img-test', prompt: 'a cat' });
    expect(img.data![0]!.b64_json).toBe(PNG_B64);
    const emb = await client.embeddings.create({ model: 'emb-test', input: 'hello world', dimensions: 4 });
    expect(mock.last('/v1/embeddings')!.body).toMatchObject({ encoding_format: 'base64', dimensions: 4 });
    expect(emb.data[0]!.embedding).toEqual(mockVector(0, 4));
    const floats = await client.embeddings.create({ model: 'emb-test', input: ['a', 'b'], encoding_format: 'float' });
    expect(floats.data.map((d) => d.embedding)).toEqual([mockVector(0), mockVector(1)]);
    // A wrong credential is a 401 the openai package surfaces as AuthenticationError.
    const wrong = new OpenAI({ apiKey: 'not-a-token', baseURL: `${t.url}/api/ai`, maxRetries: 0 });
    await expect(wrong.embeddings.create({ model: 'emb-test', input: 'x' })).rejects.toMatchObject({ status: 401 });
  });

  it('embeddings input is checked: nothing to embed is a 400 before the upstream is called', async () => {
    const before = mock.requests.length;
    for (const input of [[], [{}], null]) {
      const r = await call(t, 'POST', '/api/ai/embeddings', {
        token: user.accessToken,
        body: { model: 'emb-test', input },
      });
      expect(r.status, JSON.stringify(input)).toBe(400);
      expect(r.body.error).toBe('INVALID_INPUT');
    }
    expect(mock.requests.length).toBe(before);
  });
});
