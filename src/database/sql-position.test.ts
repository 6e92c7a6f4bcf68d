import { describe, expect, it } from 'vitest';
import { sqlPosition } from './sql-position.js';

describe('sqlPosition', () => {
  it('turns a character offset into line and column', () => {
    expect(sqlPosition('select 1 frm x', '10')).toEqual({ line: 1, column: 10 });
    expect(sqlPosition('select 1\nfrom\n  nope', '17')).toEqual({ line: 3, column: 3 });
    expect(sqlPosition('select 1\n', 10)).toEqual({ line: 2, column: 1 });
  });
  it('counts characters, not UTF-16 units', () => {
    expect(sqlPosition("select '😀' frm", '13')).toEqual({ line: 1, column: 13 });
  });
  it('gives null when there is no usable position', () => {
    expect(sqlPosition('select', undefined)).toBeNull();
    expect(sqlPosition('select', '0')).toBeNull();
    expect(sqlPosition('select', '99')).toBeNull();
    expect(sqlPosition('select', 'x')).toBeNull();
  });
});
