import { describe, expect, it } from 'vitest';
import { AppError } from '../errors/index.js';
import { redact, redactError } from './redact.js';
import { retryAfter } from './upstream.js';

const KEY = 'secretKEY-0123456789abcdef';

describe('redact', () => {
  it('removes the key and key-shaped text, before cutting (so no part of a key is left)', () => {
    expect(redact(`a ${KEY} b sk-proj-abcdef123456 c`, KEY)).toBe('a [redacted] b [redacted] c');
    expect(redact(`xx${KEY}`, KEY, 6)).toBe('xx[red…');
    expect(redact(`sk-abcdefgh`, null)).toBe('[redacted]');
  });

  it('copies an error with every message, stack and cause redacted, keeping AppError code and headers', () => {
    const inner = Object.assign(new SyntaxError(`bad ${KEY}`), { code: 'E_X', data: Buffer.from(KEY) });
    const err = new AppError('AI_UPSTREAM_RATE_LIMITED', {
      message: `limited ${KEY}`,
      headers: { 'retry-after': '3' },
      cause: new Error(`outer ${KEY}`, { cause: inner }),
    });
    const safe = redactError(err, KEY);
    expect(safe).toBeInstanceOf(AppError);
    expect(safe).toMatchObject({
      code: 'AI_UPSTREAM_RATE_LIMITED',
      status: 429,
      headers: { 'retry-after': '3' },
      message: 'limited [redacted]',
    });
    const cause = safe.cause as Error;
    expect(cause.message).toBe('outer [redacted]');
    expect(cause.cause).toMatchObject({ name: 'SyntaxError', message: 'bad [redacted]', code: 'E_X' });
    expect((cause.cause as { data?: unknown }).data).toBeUndefined();
    const all = [safe, cause, cause.cause as Error].map((e) => `${e.message}${e.stack}`).join('');
    expect(all).not.toContain(KEY);
  });
});

describe('retryAfter', () => {
  const now = Date.parse('Wed, 21 Oct 2099 07:27:30 GMT');
  it.each([
    ['7', '7'],
    ['120', '120'],
    ['Wed, 21 Oct 2099 07:28:00 GMT', '30'],
    ['Wed, 21 Oct 2099 07:27:29 GMT', '1'], // past: retry soon, not never
    ['Sat, 21 Nov 2099 07:28:00 GMT', '86400'], // a month away: capped at a day
    ['soon', null],
    ['', null],
    ['-1', null],
    ['1.5', null],
    ['1234567', null],
    ['2099-10-21T07:28:00Z', null],
    ['Wed, 21 Oct 2099 07:28:00 UTC', null],
    ['Wed, 32 Oct 2099 07:28:00 GMT', null],
    [null, null],
  ])('passes on %j as %j', (value, expected) => {
    expect(retryAfter(value, now)).toBe(expected);
  });
});
