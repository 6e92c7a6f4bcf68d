import { describe, expect, it } from 'vitest';
import { parseRange } from './range.js';

describe('Range header', () => {
  it.each([
    [undefined, 10, null],
    ['bytes=0-4', 10, { start: 0, end: 4 }],
    ['bytes=5-', 10, { start: 5, end: 9 }],
    ['bytes=-3', 10, { start: 7, end: 9 }],
    ['bytes=-30', 10, { start: 0, end: 9 }],
    ['bytes=8-100', 10, { start: 8, end: 9 }],
    ['bytes=10-', 10, 'unsatisfiable'],
    ['bytes=-0', 10, 'unsatisfiable'],
    ['bytes=0-0', 0, 'unsatisfiable'],
    ['bytes=5-2', 10, null],
    ['bytes=0-1,3-4', 10, null],
    ['items=0-1', 10, null],
    ['bytes=-', 10, null],
    ['bytes=abc', 10, null],
  ] as const)('%s of %d bytes → %j', (h, size, want) => {
    expect(parseRange(h, size)).toEqual(want);
  });
});
