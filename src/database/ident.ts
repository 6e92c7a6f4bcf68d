import { AppError } from '../errors/index.js';

/** The identifiers Plinth accepts for tables, columns and functions. */
export const IDENT = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

export function isIdent(s: unknown): s is string {
  return typeof s === 'string' && IDENT.test(s);
}

/**
 * A name a client may quote (PostgREST's `"my col"`): any characters but `"` and control
 * characters, at most 63 bytes. Only ever used for names looked up in the real schema.
 */
export function isName(s: unknown): s is string {
  return typeof s === 'string' && s !== '' && !/["\x00-\x1f\x7f]/.test(s) && new TextEncoder().encode(s).length <= 63;
}

/** Quotes an identifier for SQL. The one quoting helper: everything goes through it. */
export function quoteIdent(name: string): string {
  if (!IDENT.test(name) && !isName(name))
    throw new AppError('INVALID_INPUT', { message: `"${safe(name)}" is not a valid name.` });
  return `"${name}"`;
}

const TOKEN = /^\x01([0-9a-f]*)\x01$/;

/**
 * Replaces each `"quoted name"` of query text by a token of its hex bytes (`\x01…\x01`), so the
 * parsers split on `,` `.` `(` `!` `:` `->` without meeting them inside a name; `nameOf` reads it back.
 */
export function maskQuoted(text: string): string {
  if (!text.includes('"')) return text;
  return text.replace(/"([^"]*)"/g, (_, n: string) => `\x01${Buffer.from(n, 'utf8').toString('hex')}\x01`);
}

/** A plain identifier, or the name of a masked quoted token; null when neither is valid. */
export function nameOf(s: string): string | null {
  if (IDENT.test(s)) return s;
  const m = TOKEN.exec(s);
  if (!m) return null;
  const name = Buffer.from(m[1]!, 'hex').toString('utf8');
  return isName(name) ? name : null;
}

/** Masked text as the client wrote it (for error messages). */
export function unmask(text: string): string {
  return text.replace(/\x01([0-9a-f]*)\x01/g, (_, h: string) => `"${Buffer.from(h, 'hex').toString('utf8')}"`);
}

/** A table of schema public, quoted. */
export function qualified(table: string): string {
  return `public.${quoteIdent(table)}`;
}

/** A relation of an exposed schema (`DB_SCHEMAS`, default public), quoted. */
export function tableRef(t: { name: string; schema?: string }): string {
  return `${schemaRef(t.schema)}.${quoteIdent(t.name)}`;
}

/** A schema name for SQL: `public` as is (the SQL text of public reads stays the same), others quoted. */
export function schemaRef(schema: string | undefined): string {
  return !schema || schema === 'public' ? 'public' : quoteIdent(schema);
}

/** Checks a name given by a client; `what` names it in the error (e.g. "table name"). */
export function checkIdent(name: string, what: string): string {
  if (!IDENT.test(name)) {
    throw new AppError('INVALID_INPUT', {
      message: `The ${what} "${safe(name)}" is not valid: use letters, digits and _, starting with a letter or _, at most 63 characters.`,
    });
  }
  return name;
}

/**
 * A SQL string literal. Only DDL defaults use it (DDL takes no bind parameters); the value
 * has been checked against the column type before it gets here.
 */
export function quoteLiteral(value: string): string {
  if (value.includes('\0')) throw new AppError('INVALID_VALUE', { message: 'A value may not contain NUL characters.' });
  return `'${value.replace(/'/g, "''")}'`;
}

/** Shortens and strips client text before it is echoed in an error message. */
export function safe(s: string, max = 64): string {
  const clean = unmask(String(s)).replace(/[^\x20-\x7e]/g, '?');
  return clean.length > max ? `${clean.slice(0, max)}...` : clean;
}
