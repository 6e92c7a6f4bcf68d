import { describe, expect, it } from 'vitest';
import { AppError } from '../errors/index.js';
import { readChunk, shapeChat, shapeImages, shapeModels } from './shape.js';
import { errorMessage } from './upstream.js';

// Deterministic pseudo-random JSON values, to throw at the shaping functions.
function rng(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
}
function value(r: () => number, depth = 0): unknown {
  const k = Math.floor(r() * (depth > 3 ? 6 : 9));
  const keys = [
    'choices',
    'message',
    'content',
    'role',
    'usage',
    'prompt_tokens',
    'completion_tokens',
    'total_tokens',
    'data',
    'b64_json',
    'url',
    'delta',
    'finish_reason',
    'index',
    'error',
    'created',
    'id',
    'model',
  ];
  switch (k) {
    case 0:
      return null;
    case 1:
      return r() < 0.5;
    case 2:
      return Math.floor(r() * 100) - 10;
    case 3:
      return r() * 1e12;
    case 4:
      return 'x'.repeat(Math.floor(r() * 5));
    case 5:
      return undefined;
    case 6:
      return Array.from({ length: Math.floor(r() * 3) }, () => value(r, depth + 1));
    default:
      return Object.fromEntries(
        Array.from({ length: Math.floor(r() * 5) }, () => [keys[Math.floor(r() * keys.length)]!, value(r, depth + 1)]),
      );
  }
}

describe('shaping upstream answers', () => {
  it('never fails with anything but AppError AI_UPSTREAM_ERROR, whatever the upstream sends', () => {
    const r = rng(42);
    let shaped = 0;
    for (let i = 0; i < 5000; i++) {
      const v = value(r);
      for (const f of [() => shapeChat(v, 'm', 10), () => shapeImages(v), () => readChunk(v), () => shapeModels(v)]) {
        try {
          f();
          shaped++;
        } catch (err) {
          expect(err).toBeInstanceOf(AppError);
          expect((err as AppError).code).toBe('AI_UPSTREAM_ERROR');
        }
      }
    }
    expect(shaped).toBeGreaterThan(100);
  });

  it('keeps the spec fields typed: integers for usage and created, string or null content', () => {
    const { completion, estimated } = shapeChat(
      {
        choices: [{ message: { content: ['not', 'a string'] }, finish_reason: 7 }],
        created: 1.5,
        usage: { prompt_tokens: -1 },
      },
      'fallback-model',
      40,
    );
    expect(estimated).toBe(true);
    expect(completion.model).toBe('fallback-model');
    expect(completion.object).toBe('chat.completion');
    expect(Number.isInteger(completion.created)).toBe(true);
    expect(completion.choices[0]).toMatchObject({
      index: 0,
      message: { role: 'assistant', content: null },
      finish_reason: null,
    });
    expect(completion.usage).toEqual({ prompt_tokens: 10, completion_tokens: 0, total_tokens: 10 });
  });

  it('reads usage given as input/output tokens (image models) and fills total_tokens', () => {
    const { usage } = shapeImages({
      created: 1,
      data: [{ b64_json: 'AA' }],
      usage: { input_tokens: 5, output_tokens: 7 },
    });
    expect(usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 });
  });

  it('reads model lists that leave fields out (llama.cpp, Ollama)', () => {
    expect(shapeModels({ data: [{ id: 'local' }, { name: 'llama3.2' }, 7] }).data).toEqual([
      { id: 'local', object: 'model', created: 0, owned_by: 'upstream' },
      { id: 'llama3.2', name: 'llama3.2', object: 'model', created: 0, owned_by: 'upstream' },
    ]);
  });

  it('tells the usage-only chunk apart from content chunks', () => {
    expect(
      readChunk({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } }),
    ).toMatchObject({ usageOnly: true, chars: 0 });
    expect(readChunk({ choices: [{ delta: { content: 'abc' }, finish_reason: 'stop' }] })).toMatchObject({
      usageOnly: false,
      chars: 3,
      finished: true,
    });
    expect(readChunk({ error: { message: 'boom' } }).error).toBe('boom');
  });
});

describe('errorMessage', () => {
  it.each([
    ['{"error": {"message": "Bad temperature", "type": "invalid_request_error"}}', 'Bad temperature'],
    ['{"error": "model \\"x\\" not found"}', 'model "x" not found'],
    ['{"message": "detail here"}', 'detail here'],
    ['{"detail": "FastAPI style"}', 'FastAPI style'],
    ['<html>502 Bad Gateway</html>', ''],
    ['{"error": {"message": 42}}', ''],
    ['{"error": {"message": "line1\\nline2\\u0000"}}', 'line1 line2'],
  ])('reads %s', (text, expected) => {
    expect(errorMessage(text)).toBe(expected);
  });

  it('bounds the length', () => {
    expect(errorMessage(JSON.stringify({ error: { message: 'x'.repeat(5000) } })).length).toBeLessThanOrEqual(501);
  });
});
