// GET /api/ai/status: whether AI is set up, 200 on every install (the dashboard asks it instead
// of /api/ai/models, a 503 without a provider), the upstream's host for admins only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { OpenAiMock } from '../helpers/openai-mock.js';

const KEY = 'sk-test-plinth-upstream-key-0123456789';

describe.each(backends())('GET /api/ai/status (%s)', (backend) => {
  let mock: OpenAiMock;
  let plain: TestApp;
  let withAi: TestApp;
  beforeAll(async () => {
    mock = await new OpenAiMock(KEY).start();
    [plain, withAi] = await Promise.all([
      startApp(backend),
      startApp(backend, { AI_BASE_URL: mock.baseUrl, AI_API_KEY: KEY, AI_MODELS: 'm1,m2', AI_DEFAULT_MODEL: 'm1' }),
    ]);
  });
  afterAll(async () => {
    await plain?.close();
    await withAi?.close();
    await mock?.stop();
  });

  it('answers 200 {configured: false} on a default install, where /api/ai/models is a 503', async () => {
    const r = await plain.fetch('/api/ai/status', { headers: { 'x-api-key': plain.adminKey } });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ configured: false, models: null, defaultModel: null });
    expect((await plain.fetch('/api/ai/models', { headers: { 'x-api-key': plain.adminKey } })).status).toBe(503);
  });

  it('names the provider, the allowed models and the default; the host to admins only', async () => {
    const r = await withAi.fetch('/api/ai/status', { headers: { 'x-api-key': withAi.adminKey } });
    expect(await r.json()).toEqual({
      configured: true,
      provider: new URL(mock.baseUrl).host,
      models: ['m1', 'm2'],
      defaultModel: 'm1',
    });
    const anon = await withAi.fetch('/api/ai/status', { headers: { apikey: withAi.anonKey } });
    expect(anon.status).toBe(200);
    expect(await anon.json()).toEqual({ configured: true, models: ['m1', 'm2'], defaultModel: 'm1' });
  });

  it('is in the OpenAPI document', async () => {
    const doc = await (await plain.fetch('/api/openapi.json')).json();
    expect(doc.paths['/api/ai/status']?.get?.summary).toMatch(/configured/);
  });
});
