import { describe, expect, it } from 'vitest';
import { generateKey, isValidBucketName, keyProblem, resolveContentType, servedInline } from './keys.js';

describe('object keys', () => {
  it.each(['a', 'a/b/c.txt', 'ünï cødé/€.txt', 'a..b', '...', '.hidden', 'x%2Fy', 'k'.repeat(1024), '€'.repeat(341)])(
    'accepts %j',
    (k) => {
      expect(keyProblem(k)).toBeNull();
    },
  );

  it.each([
    ['', 'empty'],
    ['k'.repeat(1025), 'longer'],
    ['€'.repeat(342), 'longer'],
    ['/abs', 'starts with'],
    ['a//b', 'empty segment'],
    ['a/', 'empty segment'],
    ['..', '".."'],
    ['a/../b', '".."'],
    ['./a', '".."'],
    ['a\\b', 'backslash'],
    ['a\u0000b', 'control'],
    ['a\nb', 'control'],
    ['a\ud800b', 'Unicode'],
  ])('refuses %j (%s)', (k, why) => {
    expect(keyProblem(k)).toContain(why);
  });
});

describe('bucket names', () => {
  it('follow the spec: letters, digits, _ and -, 1-63 characters', () => {
    for (const ok of ['a', 'My_Bucket-1', 'x'.repeat(63)]) expect(isValidBucketName(ok)).toBe(true);
    for (const bad of ['', 'x'.repeat(64), 'a.b', 'a b', '../x', 'ä']) expect(isValidBucketName(bad)).toBe(false);
  });
});

describe('generated keys', () => {
  it('are <safe base name>-<time>-<random><ext>', () => {
    expect(generateKey('My Photo (1).JPG', 1700000000000)).toMatch(/^My-Photo-1-1700000000000-[0-9a-f]{8}\.jpg$/);
    expect(generateKey('../../etc/passwd', 1)).toMatch(/^passwd-1-[0-9a-f]{8}$/);
    expect(generateKey('C:\\Users\\x\\report.pdf', 1)).toMatch(/^report-1-[0-9a-f]{8}\.pdf$/);
    expect(generateKey('...', 1)).toMatch(/^file-1-[0-9a-f]{8}$/);
    expect(generateKey('x.not-an-ext!', 1)).toMatch(/^x-not-an-ext-1-/);
    expect(generateKey('a.txt')).not.toBe(generateKey('a.txt'));
    expect(keyProblem(generateKey('\u0000/..'))).toBeNull();
  });
});

describe('content types', () => {
  it('keeps a well-formed type, else guesses from the extension', () => {
    expect(resolveContentType('image/png', 'x')).toBe('image/png');
    expect(resolveContentType('text/plain; charset=utf-8', 'x')).toBe('text/plain; charset=utf-8');
    expect(resolveContentType('text/html\r\nX-Evil: 1', 'a.txt')).toBe('text/plain');
    expect(resolveContentType('application/octet-stream', 'a.svg')).toBe('image/svg+xml');
    expect(resolveContentType(undefined, 'a.unknown')).toBe('application/octet-stream');
  });

  it('serves only passive types inline', () => {
    for (const t of ['image/png', 'text/plain; charset=utf-8', 'application/pdf', 'video/mp4'])
      expect(servedInline(t)).toBe(true);
    for (const t of [
      'text/html',
      'image/svg+xml',
      'text/javascript',
      'application/xhtml+xml',
      'application/xml',
      'application/octet-stream',
    ]) {
      expect(servedInline(t)).toBe(false);
    }
  });
});
