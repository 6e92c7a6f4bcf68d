import type { TextPosition } from '../errors/index.js';

/**
 * Line and column (1-based) of a Postgres error position, which counts characters
 * (1-based) into the query text; null when the error has none or it is out of range.
 */
export function sqlPosition(query: string, position: unknown): TextPosition | null {
  const at = typeof position === 'string' || typeof position === 'number' ? Number(position) : NaN;
  if (!Number.isInteger(at) || at < 1) return null;
  const chars = Array.from(query);
  if (at > chars.length + 1) return null;
  let line = 1;
  let column = 1;
  for (let i = 0; i < at - 1; i++) {
    if (chars[i] === '\n') {
      line++;
      column = 1;
    } else column++;
  }
  return { line, column };
}
