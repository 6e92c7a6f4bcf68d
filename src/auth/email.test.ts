import { describe, expect, it } from 'vitest';
import { normalizeEmail, parseEmail } from './email.js';
import { AppError } from '../errors/index.js';

describe('email addresses', () => {
  it.each([
    ['  Ada@Example.COM ', 'ada@example.com'],
    ['first.last+tag@sub.example.co.uk', 'first.last+tag@sub.example.co.uk'],
    ['x@a-b.io', 'x@a-b.io'],
    ['Ünïcode@example.com', 'ünïcode@example.com'],
    ['jörg@example.com', 'jörg@example.com'],
    ['jo\u0308rg@example.com', 'jörg@example.com'],
    ['用户@example.com', '用户@example.com'],
    ['Δοκιμή@example.com', 'δοκιμή@example.com'],
    ['नमस्ते@example.com', 'नमस्ते@example.com'],
    ['\uff23at@example.com', 'cat@example.com'],
    ['\uff21\uff24\uff21\uff20\uff45xample.com', 'ada@example.com'],
    ['\ufb01le@example.com', 'file@example.com'],
  ])('accepts %j as %j', (raw, want) => {
    expect(parseEmail(raw)).toBe(want);
  });

  it.each([
    '',
    '   ',
    'plain',
    '@example.com',
    'a@',
    'a@localhost',
    'a@@example.com',
    'a b@example.com',
    'a@exa mple.com',
    'a@-example.com',
    'a@example-.com',
    'a@example..com',
    'a\u0000@example.com',
    'a\n@example.com',
    '"a"@example.com',
    'a<script>@example.com',
    `${'a'.repeat(65)}@example.com`,
    `a@${'b'.repeat(64)}.com`,
    `a@${'b.'.repeat(130)}com`,
    // Invisible, control, private-use and unassigned characters anywhere.
    'a\u200b@example.com',
    'a\u200c@example.com',
    'a\u200d@example.com',
    'b\ufeffa@example.com',
    'a\u2060@example.com',
    'a\u00ad@example.com',
    'a\u202eb@example.com',
    'a\u2066b@example.com',
    'a\u3164@example.com',
    'a\ufe0f@example.com',
    'a\u034f@example.com',
    'a\ue000@example.com',
    'a\u0378@example.com',
    'a\ud800@example.com',
    'a\u{e0041}@example.com',
    'a@example.com\u200b',
  ])('refuses %j with INVALID_INPUT', (raw) => {
    expect(() => parseEmail(raw)).toThrow(AppError);
    try {
      parseEmail(raw);
    } catch (err) {
      expect((err as AppError).code).toBe('INVALID_INPUT');
    }
  });

  it('normalises without judging (sign-in looks up whatever was typed)', () => {
    expect(normalizeEmail('  NOT AN EMAIL ')).toBe('not an email');
    expect(normalizeEmail('\uff23\u200b@X')).toBe('c\u200b@x');
  });

  it('is stable: normalising twice gives what normalising once gives, for every code point', () => {
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const once = normalizeEmail(String.fromCodePoint(cp));
      if (normalizeEmail(once) !== once) expect.fail(`U+${cp.toString(16)} is not stable`);
    }
  });
});
