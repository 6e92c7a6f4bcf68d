import { describe, expect, it } from 'vitest';
import { UrlSigner } from './signing.js';

describe('signed download tokens', () => {
  const s = new UrlSigner('x'.repeat(48));
  const exp = 2_000_000_000;
  const obj = (bucket: string, key: string, version = 'v1') => ({ bucket, key, version });

  it('verify for the same object version until they expire', () => {
    const token = s.sign(obj('b', 'k/1.txt'), exp);
    expect(s.verify(obj('b', 'k/1.txt'), token, exp - 10)).toBe(true);
    expect(s.verify(obj('b', 'k/1.txt'), token, exp)).toBe(true);
    expect(s.verify(obj('b', 'k/1.txt'), token, exp + 1)).toBe(false);
  });

  it('do not verify for another object, another version, another expiry or another secret', () => {
    const token = s.sign(obj('b', 'k'), exp);
    expect(s.verify(obj('b', 'k2'), token, 0)).toBe(false);
    expect(s.verify(obj('c', 'k'), token, 0)).toBe(false);
    // The same key written again (replaced, or deleted and re-created) is another version.
    expect(s.verify(obj('b', 'k', 'v2'), token, 0)).toBe(false);
    expect(s.verify(obj('b', 'k', ''), token, 0)).toBe(false);
    // "b\nk" vs "b" + "\nk": the fields are separated unambiguously by the key rules (no newline).
    expect(s.verify(obj('b', 'k'), token.replace(/^\d+/, String(exp + 1)), 0)).toBe(false);
    expect(new UrlSigner('y'.repeat(48)).verify(obj('b', 'k'), token, 0)).toBe(false);
    for (const bad of ['', 'x', `${exp}.`, `${exp}.${'A'.repeat(43)}`, `-1.${token.split('.')[1]}`])
      expect(s.verify(obj('b', 'k'), bad, 0)).toBe(false);
  });
});
