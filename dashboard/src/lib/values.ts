// A column's values as inputs show them and back: the side panel, the in-place editors and the
// CSV import read and write values through these two functions.

/** The column facts the conversions need. */
export interface Typed {
  name: string;
  type: string;
}

/** A value as its input shows it ('' for null). */
export function toText(c: Typed, v: unknown): string {
  if (v === null || v === undefined) return '';
  if (c.type === 'json') return JSON.stringify(v, null, 2);
  if (c.type === 'datetime') {
    const d = new Date(String(v));
    return Number.isNaN(d.getTime())
      ? String(v)
      : new Date(d.getTime() - d.getTimezoneOffset() * 60000).toISOString().slice(0, 19);
  }
  return String(v);
}

/** An input's text → the JSON value for the column (empty is null). */
export function fromText(c: Typed, text: string): unknown {
  if (text === '' || text === 'NULL') return null;
  if (c.type === 'integer' || c.type === 'float') return Number(text);
  if (c.type === 'boolean') return text === 'true';
  if (c.type === 'datetime') return new Date(text).toISOString();
  if (c.type === 'json') {
    try {
      return JSON.parse(text);
    } catch (e) {
      throw new Error(`${c.name}: not valid JSON (${(e as Error).message}).`);
    }
  }
  return text;
}

/** The HTML input type of a column type (text for the rest). */
export function inputType(type: string): 'number' | 'date' | 'datetime-local' | 'text' {
  return (
    ({ integer: 'number', float: 'number', date: 'date', datetime: 'datetime-local' } as const)[type as 'integer'] ??
    'text'
  );
}
