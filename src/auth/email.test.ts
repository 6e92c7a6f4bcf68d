import { describe, expect, it } from 'vitest';
import { normalizeEmail, parseEmail } from './email.js';
import { AppError } from '../errors/index.js';

describe('email addresses', () => {
  it.each([
    ['  Ada@Example.COM ', 'ada@example.com'],
    ['first.last+tag@sub.example.co.uk', 'first.last+tag@sub.example.co.uk'],
    ['x@a-b.io', 'x@a-b.io'],
    ['Ünïcode@example.com', 'ünïcode@example.com'],
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
  });
});
