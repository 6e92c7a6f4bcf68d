import { describe, expect, it } from 'vitest';
import { UrlSigner } from './signing.js';

describe('signed download tokens', () => {
  const s = new UrlSigner('x'.repeat(48));
  const exp = 2_000_000_000;

  it('verify for the same object until they expire', () => {
    const token = s.sign('b', 'k/1.txt', exp);
    expect(s.verify('b', 'k/1.txt', token, exp - 10)).toBe(true);
    expect(s.verify('b', 'k/1.txt', token, exp)).toBe(true);
    expect(s.verify('b', 'k/1.txt', token, exp + 1)).toBe(false);
  });

  it('do not verify for another object, another expiry or another secret', () => {
    const token = s.sign('b', 'k', exp);
    expect(s.verify('b', 'k2', token, 0)).toBe(false);
    expect(s.verify('c', 'k', token, 0)).toBe(false);
    // "b\nk" vs "b" + "\nk": the fields are separated unambiguously by the key rules (no newline).
    expect(s.verify('b', 'k', token.replace(/^\d+/, String(exp + 1)), 0)).toBe(false);
    expect(new UrlSigner('y'.repeat(48)).verify('b', 'k', token, 0)).toBe(false);
    for (const bad of ['', 'x', `${exp}.`, `${exp}.${'A'.repeat(43)}`, `-1.${token.split('.')[1]}`]) expect(s.verify('b', 'k', bad, 0)).toBe(false);
  });
});
