import { describe, expect, it } from 'vitest';
import { closest } from './fuzzy.js';

// The examples of PostgREST's own documentation of its hints (Error.hs, noRpcHint).
describe('closest', () => {
  it('guesses a function name only when it is at least 0.75 alike', () => {
    expect(closest(['test', 'another'], 'testt', 0.75)).toBe('test');
    expect(closest(['test', 'another'], 'other', 0.75)).toBeNull();
    expect(closest(['test', 'another'], 'noclosealternative', 0.75)).toBeNull();
  });

  it('guesses parameter lists with the default 0.33', () => {
    const lists = ['(name, param, val)', '(attr, id)'];
    expect(closest(lists, '(nam, pqaram, vall)')).toBe('(name, param, val)');
    expect(closest(lists, '(param, val)')).toBe('(name, param, val)');
    expect(closest(lists, '(attrs, id)')).toBe('(attr, id)');
    expect(closest(lists, '(id)')).toBe('(attr, id)');
    expect(closest(lists, '(noclosealternative)')).toBeNull();
  });

  it('answers an entry equal but for case at once', () => {
    expect(closest(['Books', 'books2'], 'BOOKS')).toBe('Books');
    expect(closest([], 'x')).toBeNull();
  });
});
