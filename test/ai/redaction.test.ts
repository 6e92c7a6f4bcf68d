import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { jsonLines } from '../helpers/log.js';
import { OpenAiMock } from '../helpers/openai-mock.js';
import { FrameReader } from './sse-client.js';

// Not shaped like a provider key (sk-…), so only the comparison with AI_API_KEY can catch it.
const KEY = `secretKEY-${randomBytes(16).toString('hex')}`;

/** Any 8 characters of the key in a row: a quote cut short (JSON.parse quotes 10) is a leak too. */
function leaks(text: string): string[] {
  const found = new Set<string>();
  for (let i = 0; i + 8 <= KEY.length; i++) if (text.includes(KEY.slice(i, i + 8))) found.add(KEY.slice(i, i + 8));
  return [...found];
}

describe.each(backends())('AI provider key in upstream text (%s)', (backend) => {
  const log = jsonLines();
  let mock: OpenAiMock;
  let t: TestApp;
  let user: Awaited<ReturnType<typeof createTestUser>>;

  beforeAll(async () => {
    mock = await new OpenAiMock(KEY).start();
    t = await startApp(
      backend,
      { AI_BASE_URL: mock.baseUrl, AI_API_KEY: KEY, LOG_LEVEL: 'trace' },
      undefined,
      log.stream,
    );
    user = await createTestUser(t);
  });
  afterAll(async () => {
    await t?.close();
    await mock?.stop();
  });

  /** The whole answer as a client sees it: status line, headers and body (every frame of a stream). */
  async function call(path: string, body: Record<string, unknown>): Promise<{ status: number; text: string }> {
    const res = await t.fetch(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...user.auth },
      body: JSON.stringify(body),
    });
    const text = body.stream ? (await new FrameReader(res).all()).join('\n') : await res.text();
    return { status: res.status, text: `${JSON.stringify([...res.headers])}\n${text}` };
  }

  const hi = [{ role: 'user', content: 'hi' }];
  it.each([
    [
      'a JSON error body (500)',
      '/api/ai/chat/completions',
      { model: 'mock-echo-key', messages: hi },
      502,
      /status 500/,
    ],
    [
      'a JSON error message the client sees (400)',
      '/api/ai/chat/completions',
      { model: 'mock-echo-key-400', messages: hi },
      400,
      /Bad request for key \[redacted\]/,
    ],
    [
      'a body that is not JSON',
      '/api/ai/chat/completions',
      { model: 'mock-echo-key-html', messages: hi },
      502,
      /not valid JSON/,
    ],
    [
      'an images body that is not JSON',
      '/api/ai/images/generations',
      { model: 'mock-echo-key-html', prompt: 'a cat' },
      502,
      /not valid JSON/,
    ],
    [
      'an error event mid-stream',
      '/api/ai/chat/completions',
      { model: 'mock-echo-key', stream: true, messages: hi },
      200,
      /upstream_error/,
    ],
    [
      'a chunk that is not JSON mid-stream',
      '/api/ai/chat/completions',
      { model: 'mock-echo-key-html', stream: true, messages: hi },
      200,
      /upstream_error/,
    ],
  ])(
    'keeps the key out of the answer and the log when it is echoed in %s',
    async (_name, path, body, status, answer) => {
      const before = log.lines.length;
      const res = await call(path, body);
      expect(res.status).toBe(status);
      expect(res.text).toMatch(answer);
      expect(leaks(res.text)).toEqual([]);
      await new Promise((r) => setTimeout(r, 50)); // "request completed" is written after the answer
      const lines = log.lines.slice(before);
      expect(leaks(JSON.stringify(lines))).toEqual([]);
      // The upstream's text is still logged for the operator, with the key taken out.
      if (status !== 400) expect(JSON.stringify(lines.filter((l) => l.level >= 50))).toContain('[redacted]');
    },
  );

  it('never wrote the key to the log at all', () => {
    expect(log.lines.length).toBeGreaterThan(10);
    expect(leaks(JSON.stringify(log.lines))).toEqual([]);
  });
});
