import { describe, expect, it } from 'vitest';
import { SLUG_PATTERN, slugify } from './slug.js';

describe('slugify', () => {
  it.each([
    ['Hello World', 'hello-world'],
    ['  Send   Email! ', 'send-email'],
    ['Crème brûlée', 'creme-brulee'],
    ['__init__', 'init__'],
    ['a'.repeat(100), 'a'.repeat(63)],
    [`${'a'.repeat(62)} b`, 'a'.repeat(62)],
  ])('%s → %s', (name, slug) => {
    expect(slugify(name)).toBe(slug);
    expect(slug).toMatch(new RegExp(SLUG_PATTERN));
  });

  it('never gives an empty or invalid slug', () => {
    for (const name of ['', '!!!', '日本語', '---']) expect(slugify(name)).toMatch(new RegExp(SLUG_PATTERN));
  });
});
