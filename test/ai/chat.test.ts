import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { MOCK_USAGE, OpenAiMock } from '../helpers/openai-mock.js';
import { jsonLines } from '../helpers/log.js';

const KEY = 'sk-test-plinth-upstream-key-0123456789';

describe.each(backends())('AI chat completions (%s)', (backend) => {
  let mock: OpenAiMock;
  let t: TestApp;
  let user: Awaited<ReturnType<typeof createTestUser>>;

  beforeAll(async () => {
    mock = await new OpenAiMock(KEY).start();
    // Short, so the hang case is quick, but long enough for a 3 MiB prompt to reach the mock
    // on a loaded machine (400 ms was not: 504 at load 18).
    t = await startApp(backend, { AI_BASE_URL: mock.baseUrl, AI_API_KEY: KEY, AI_TIMEOUT_MS: '2000' });
    user = await createTestUser(t);
  });
  afterAll(async () => {
    await t?.close();
    await mock?.stop();
  });

  const chat = (body: unknown, headers: Record<string, string> = user.auth) =>
    t.fetch('/api/ai/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  it('answers with the spec fields and sends the API key only to the upstream', async () => {
    const res = await chat({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hi there' }] });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({
      id: 'chatcmpl-mock123',
      object: 'chat.completion',
      created: 1700000000,
      model: 'gpt-test',
      choices: [{ index: 0, message: { role: 'assistant', content: 'echo: Hi there' }, finish_reason: 'stop' }],
      usage: MOCK_USAGE,
    });
    // Upstream extras pass through.
    expect(body.system_fingerprint).toBe('fp_mock');
    const got = mock.last()!;
    expect(got.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(got.headers['content-type']).toBe('application/json');
    // The caller's credential never reaches the upstream.
    expect(JSON.stringify(got.headers)).not.toContain(user.token);
    expect(JSON.stringify(body)).not.toContain(KEY);
  });

  it('passes the standard OpenAI parameters through unchanged', async () => {
    const params = {
      model: 'gpt-test',
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this image?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          ],
        },
      ],
      temperature: 0.2,
      max_tokens: 50,
      top_p: 0.9,
      stop: ['\n\n'],
      seed: 7,
      response_format: { type: 'json_object' },
      tools: [
        {
          type: 'function',
          function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
        },
      ],
      tool_choice: 'auto',
      user: 'end-user-1',
    };
    const res = await chat(params);
    expect(res.status).toBe(200);
    expect(mock.last()!.body).toEqual(params);
  });

  it('relays tool calls (content null) and accepts them back in the next turn', async () => {
    const res = await chat({ model: 'mock-tools', messages: [{ role: 'user', content: 'Weather in Paris?' }] });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.choices[0]).toMatchObject({
      finish_reason: 'tool_calls',
      message: { role: 'assistant', content: null },
    });
    expect(body.choices[0].message.tool_calls[0].function.name).toBe('get_weather');
    const next = await chat({
      model: 'gpt-test',
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: body.choices[0].message.tool_calls },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temp": 21}' },
      ],
    });
    expect(next.status).toBe(200);
  });

  it.each([
    ['no messages', { model: 'gpt-test', messages: [] }],
    ['messages missing', { model: 'gpt-test' }],
    ['messages not an array', { model: 'gpt-test', messages: 'hello' }],
    ['a wrong role', { model: 'gpt-test', messages: [{ role: 'wizard', content: 'hi' }] }],
    ['content a number', { model: 'gpt-test', messages: [{ role: 'user', content: 42 }] }],
    ['user content missing', { model: 'gpt-test', messages: [{ role: 'user' }] }],
    ['user content null', { model: 'gpt-test', messages: [{ role: 'user', content: null }] }],
    [
      'assistant without content or tool_calls',
      { model: 'gpt-test', messages: [{ role: 'assistant', content: null }] },
    ],
    ['tool message without tool_call_id', { model: 'gpt-test', messages: [{ role: 'tool', content: 'x' }] }],
    ['model empty', { model: '', messages: [{ role: 'user', content: 'hi' }] }],
    ['model not a string', { model: 5, messages: [{ role: 'user', content: 'hi' }] }],
    ['no model and no default', { messages: [{ role: 'user', content: 'hi' }] }],
    ['stream not a boolean', { model: 'gpt-test', stream: 'yes', messages: [{ role: 'user', content: 'hi' }] }],
    ['a body that is an array', [{ role: 'user', content: 'hi' }]],
  ])('refuses %s with 400 and does not call the upstream', async (_name, body) => {
    const before = mock.requests.length;
    const res = await chat(body);
    expect(res.status).toBe(400);
    const err = await res.json();
    expect(err.error).toBe('INVALID_INPUT');
    expect(err.nextActions).toBeTruthy();
    expect(mock.requests.length).toBe(before);
  });

  it('refuses a body that is not JSON with 400', async () => {
    const res = await t.fetch('/api/ai/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...user.auth },
      body: '{"messages": [',
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toBe('INVALID_JSON');
  });

  it('needs a credential, refuses the anon key by default, and lets admins call', async () => {
    const msg = { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] };
    expect((await chat(msg, {})).status).toBe(401);
    const anon = await chat(msg, { apikey: t.anonKey });
    expect(anon.status).toBe(403);
    expect((await anon.json()).nextActions).toMatch(/AI_ALLOW_ANON/);
    expect((await chat(msg, { 'x-api-key': t.adminKey })).status).toBe(200);
    expect((await chat(msg, { authorization: 'Bearer not-a-token' })).status).toBe(401);
  });

  it.each([
    ['400 → 400 with the upstream message', 'mock-400', 400, 'AI_UPSTREAM_REJECTED', /Invalid value for 'temperature'/],
    ['404 (unknown model) → 400', 'mock-404', 400, 'AI_UPSTREAM_REJECTED', /does not exist/],
    ['401 (bad key) → 502 without the key', 'mock-401', 502, 'AI_UPSTREAM_ERROR', /credentials/],
    ['429 → 429', 'mock-429', 429, 'AI_UPSTREAM_RATE_LIMITED', /limiting/],
    ['500 → 502', 'mock-500', 502, 'AI_UPSTREAM_ERROR', /status 500/],
    ['503 → 502', 'mock-503', 502, 'AI_UPSTREAM_ERROR', /status 503/],
    ['a dropped connection → 502', 'mock-broken', 502, 'AI_UPSTREAM_ERROR', /could not be reached|broke/],
    ['a body that is not JSON → 502', 'mock-malformed', 502, 'AI_UPSTREAM_ERROR', /not valid JSON/],
    ['JSON of the wrong shape → 502', 'mock-shape', 502, 'AI_UPSTREAM_ERROR', /does not understand/],
    ['no answer within AI_TIMEOUT_MS → 504', 'mock-hang', 504, 'AI_UPSTREAM_TIMEOUT', /in time/],
  ])('maps upstream %s', async (_name, model, status, code, message) => {
    const res = await chat({ model, messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(status);
    const body = await res.json();
    expect(body).toMatchObject({ statusCode: status, error: code });
    expect(body.message).toMatch(message);
    expect(body.nextActions).toBeTruthy();
    const text = JSON.stringify(body);
    expect(text).not.toMatch(/sk-abc|internal-detail|\*\*\*\*/);
    if (status === 429) expect(res.headers.get('retry-after')).toBe('7');
  });

  it('passes on a Retry-After date as seconds (at most a day) and drops one that is not valid', async () => {
    const msg = { messages: [{ role: 'user', content: 'hi' }] };
    const dated = await chat({ model: 'mock-429-date', ...msg });
    expect(dated.status).toBe(429);
    expect((await dated.json()).error).toBe('AI_UPSTREAM_RATE_LIMITED');
    expect(dated.headers.get('retry-after')).toBe('86400');
    const junk = await chat({ model: 'mock-429-junk', ...msg });
    expect(junk.status).toBe(429);
    expect(junk.headers.get('retry-after')).toBeNull();
  });

  it('never follows an upstream redirect, so the API key cannot travel to another host', async () => {
    const elsewhere = await new OpenAiMock().start();
    try {
      mock.redirectTo = `${elsewhere.baseUrl}/chat/completions`;
      for (const stream of [false, true]) {
        const res = await chat({ model: 'mock-redirect', stream, messages: [{ role: 'user', content: 'hi' }] });
        expect(res.status).toBe(502);
        expect((await res.json()).error).toBe('AI_UPSTREAM_ERROR');
      }
      expect(elsewhere.requests).toEqual([]);
    } finally {
      await elsewhere.stop();
    }
  });

  it('fills in usage when the upstream sends none (estimated)', async () => {
    const res = await chat({ model: 'mock-nousage', messages: [{ role: 'user', content: 'x'.repeat(40) }] });
    expect(res.status).toBe(200);
    const { usage } = await res.json();
    expect(usage.prompt_tokens).toBe(10);
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
  });

  it('accepts a vision prompt larger than the app-wide body limit (images as data URLs)', async () => {
    const image = `data:image/png;base64,${'A'.repeat(3 * 1024 * 1024)}`;
    const res = await chat({
      model: 'gpt-test',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what?' },
            { type: 'image_url', image_url: { url: image } },
          ],
        },
      ],
    });
    expect(res.status).toBe(200);
    expect(
      (mock.last()!.body!.messages as Array<{ content: Array<{ image_url?: { url: string } }> }>)[0]!.content[1]!
        .image_url!.url,
    ).toBe(image);
  });

  it('lists the upstream models in OpenAI shape when there is no allow-list', async () => {
    const res = await t.fetch('/api/ai/models', { headers: user.auth });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      object: 'list',
      data: [{ id: 'mock', object: 'model', created: 1700000000, owned_by: 'mock' }],
    });
    expect(mock.last('/v1/models')!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect((await t.fetch('/api/ai/models', { headers: { apikey: t.anonKey } })).status).toBe(403);
    expect((await t.fetch('/api/ai/models')).status).toBe(401);
  });

  it('describes the AI endpoints in the OpenAPI document', async () => {
    const doc = await (await t.fetch('/api/openapi.json')).json();
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/api/ai/chat/completions', '/api/ai/images/generations', '/api/ai/usage']),
    );
    const chatOp = doc.paths['/api/ai/chat/completions'].post;
    expect(JSON.stringify(chatOp)).toContain('finish_reason');
  });

  it('keeps serving after all of the above', async () => {
    const res = await chat({ model: 'gpt-test', messages: [{ role: 'user', content: 'still there?' }] });
    expect(res.status).toBe(200);
  });
});

describe.each(backends())('AI configuration (%s)', (backend) => {
  let mock: OpenAiMock;
  beforeAll(async () => {
    mock = await new OpenAiMock().start();
  });
  afterAll(async () => {
    await mock?.stop();
  });

  it('answers 503 AI_NOT_CONFIGURED saying what to set when AI_BASE_URL is missing (logged at info, no stack)', async () => {
    const log = jsonLines();
    const t = await startApp(backend, { LOG_LEVEL: 'info' }, undefined, log.stream);
    try {
      // The anon key is refused the same way whether AI is set up or not: who comes before what.
      const anon = await t.fetch('/api/ai/chat/completions', {
        method: 'POST',
        headers: { 'content-type': 'application/json', apikey: t.anonKey },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(anon.status).toBe(403);
      expect((await anon.json()).error).toBe('FORBIDDEN');
      const user = await createTestUser(t);
      for (const [path, body] of [
        ['/api/ai/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'hi' }] }],
        ['/api/ai/images/generations', { model: 'm', prompt: 'a cat', size: '256x256' }],
      ] as const) {
        const res = await t.fetch(path, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...user.auth },
          body: JSON.stringify(body),
        });
        expect(res.status).toBe(503);
        const err = await res.json();
        expect(err.error).toBe('AI_NOT_CONFIGURED');
        expect(err.nextActions).toMatch(/AI_BASE_URL/);
        expect(err.nextActions).toMatch(/AI_API_KEY/);
      }
      for (const path of ['/api/ai/models', '/api/ai/usage/me'])
        expect((await t.fetch(path, { headers: user.auth })).status).toBe(503);
      const health = await (await t.fetch('/api/health?checks=true')).json();
      expect(health.checks.ai).toBeUndefined();
      const answers = log.lines.filter((l) => l.code === 'AI_NOT_CONFIGURED');
      expect(answers.length).toBeGreaterThan(0);
      // A feature left off is the server's setup, not a failure: info, without an error or stack.
      expect(answers.every((l) => l.level === 30 && l.err === undefined)).toBe(true);
    } finally {
      await t.close();
    }
  });

  it('uses the default model, enforces the allow-list, and sends no Authorization without a key', async () => {
    const t = await startApp(backend, {
      AI_BASE_URL: mock.baseUrl,
      AI_MODELS: 'small-model, big-model',
      AI_DEFAULT_MODEL: 'small-model',
    });
    try {
      const user = await createTestUser(t);
      const chat = (body: unknown) =>
        t.fetch('/api/ai/chat/completions', {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...user.auth },
          body: JSON.stringify(body),
        });
      const res = await chat({ messages: [{ role: 'user', content: 'hi' }] });
      expect(res.status).toBe(200);
      expect((await res.json()).model).toBe('small-model');
      expect(mock.last()!.body!.model).toBe('small-model');
      expect(mock.last()!.headers.authorization).toBeUndefined();
      expect((await chat({ model: 'big-model', messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);
      const before = mock.requests.length;
      const refused = await chat({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
      expect(refused.status).toBe(400);
      const err = await refused.json();
      expect(err.error).toBe('MODEL_NOT_ALLOWED');
      expect(err.nextActions).toContain('small-model, big-model');
      expect(mock.requests.length).toBe(before);
      const health = await (await t.fetch('/api/health?checks=true')).json();
      expect(health.checks.ai).toEqual({ status: 'ok' });
      const models = await (await t.fetch('/api/ai/models', { headers: user.auth })).json();
      expect(models.data.map((m: { id: string }) => m.id)).toEqual(['small-model', 'big-model']);
    } finally {
      await t.close();
    }
  });

  it('answers 502 when the upstream cannot be reached at all', async () => {
    const dead = await new OpenAiMock().start();
    const deadUrl = dead.baseUrl;
    await dead.stop();
    const t = await startApp(backend, { AI_BASE_URL: deadUrl, AI_DEFAULT_MODEL: 'm' });
    try {
      const user = await createTestUser(t);
      const res = await t.fetch('/api/ai/chat/completions', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...user.auth },
        body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).toBe(502);
      expect((await res.json()).error).toBe('AI_UPSTREAM_ERROR');
      // Reported, but the provider being down does not make this instance unready.
      const health = await t.fetch('/api/health?checks=true');
      expect(health.status).toBe(200);
      const body = await health.json();
      expect(body.status).toBe('ok');
      expect(body.checks.ai.status).toBe('down');
      expect(body.checks.database.status).toBe('ok');
    } finally {
      await t.close();
    }
  });
});
