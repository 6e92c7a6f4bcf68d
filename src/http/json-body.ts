import { isUtf8 } from 'node:buffer';
import { parse } from 'secure-json-parse';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors/index.js';

/** Deeper JSON is refused: serializing it again (to Postgres, to the AI provider) would overflow the stack. */
const MAX_JSON_DEPTH = 512;

const PARSE_OPTIONS = { protoAction: 'error', constructorAction: 'error' } as const;
// A surrogate written as an escape (a raw one cannot survive UTF-8 decoding of the body).
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

// A number literal can only change when parsed to a double if its mantissa has 16 or more
// digits (15 significant digits always survive) or its exponent has 3 or more (out of the
// normal range: overflow, or subnormals with fewer digits of precision). With at most 15
// digits and a 2-digit exponent the value lies within 1e-113..1e114, where every such decimal
// is the shortest form of its double. So this native scan over the whole text, strings
// included, finds every literal that could be lossy (and some that are not, checked exactly).
// `[\d.]` is spelled out 16 times: V8 then skips ahead by the pattern length, about 3x faster than `{16}`.
const MAYBE_LOSSY = new RegExp(`${'[\\d.]'.repeat(16)}|\\d[eE][+-]?\\d\\d\\d`);
// A literal that MAYBE_LOSSY would flag, matched from its first character.
const SUSPECT = /-?(?:\d[\d.]{15}|\d+(?:\.\d+)?[eE][+-]?\d{3})/g;
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const SHORTEST_SUSPECT = 5; // 1e100
const SHOWN_DIGITS = 40;

/**
 * Parses a JSON request body (an empty one is not JSON), refusing what would otherwise fail
 * later or change silently: nesting deeper than MAX_JSON_DEPTH, `__proto__` or
 * `constructor.prototype` keys, strings with a lone UTF-16 surrogate (Postgres would
 * store U+FFFD in its place), and number literals that a double cannot hold exactly (they
 * would be rounded, or become Infinity or 0).
 */
function parseJsonBody(text: string): unknown {
  let value: unknown;
  try {
    // V8's JSON.parse does not recurse, so any depth parses; secure-json-parse's check does not recurse either.
    value = parse(text, PARSE_OPTIONS);
  } catch {
    throw new AppError('INVALID_JSON');
  }
  // Nesting deeper than MAX_JSON_DEPTH takes at least twice as many characters.
  if (text.length > 2 * MAX_JSON_DEPTH && nestedDeeperThan(value, MAX_JSON_DEPTH)) {
    throw new AppError('INVALID_INPUT', { message: `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels.` });
  }
  if (SURROGATE_ESCAPE.test(text) && hasLoneSurrogate(value)) {
    throw new AppError('INVALID_INPUT', {
      message:
        'The JSON body has a string with a lone UTF-16 surrogate (e.g. "\\ud800"); send well-formed Unicode text.',
    });
  }
  const lossy = MAYBE_LOSSY.test(text) ? findLossyNumber(text) : null;
  if (lossy !== null) {
    const shown = lossy.length > SHOWN_DIGITS ? `${lossy.slice(0, SHOWN_DIGITS)}… (${lossy.length} characters)` : lossy;
    const advice =
      lossy.length > SHOWN_DIGITS ? 'send it as a JSON string (in quotes) instead' : `send it as a string: "${lossy}"`;
    throw new AppError('INVALID_INPUT', {
      message: `The number ${shown} cannot be kept exactly (JSON numbers are read as 64-bit floats); ${advice}.`,
    });
  }
  return value;
}

/**
 * Fastify's content-type parser for application/json (registered with parseAs: 'buffer'). JSON
 * is UTF-8: other bytes are refused rather than decoded to U+FFFD.
 */
export function jsonBodyParser(
  request: FastifyRequest,
  body: string | Buffer,
  done: (err: Error | null, body?: unknown) => void,
): void {
  try {
    // PostgREST clients send DELETE with "Content-Type: application/json" and no body at all.
    // InsForge's MCP server sends POST /api/auth/tokens/anon the same way (routes that allow it say so).
    if (body.length === 0 && (request.method === 'DELETE' || request.routeOptions?.config?.emptyJsonBody === true))
      return done(null, undefined);
    if (typeof body !== 'string' && !isUtf8(body)) {
      throw new AppError('INVALID_JSON', { message: 'The request body is not valid UTF-8.' });
    }
    done(null, parseJsonBody(body.toString()));
  } catch (err) {
    done(err as Error);
  }
}

/**
 * Whether a parsed value nests deeper than `max` arrays and objects. Recurses at most `max`
 * levels: it stops as soon as it is deeper. A walk of the value, not a scan of the text, so
 * long strings (an inline image) cost nothing.
 */
function nestedDeeperThan(value: unknown, max: number, depth = 1): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (depth > max) return true;
  if (Array.isArray(value)) return value.some((v) => nestedDeeperThan(v, max, depth + 1));
  for (const key in value) if (nestedDeeperThan((value as Record<string, unknown>)[key], max, depth + 1)) return true;
  return false;
}

/** Looks through every key and string of a parsed value (its depth already bounded). */
function hasLoneSurrogate(value: unknown): boolean {
  if (typeof value === 'string') return LONE_SURROGATE.test(value);
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(hasLoneSurrogate);
  return Object.entries(value).some(([k, v]) => LONE_SURROGATE.test(k) || hasLoneSurrogate(v));
}

/**
 * The first number literal outside strings of valid JSON `text` whose decimal value differs
 * from that of the double it parses to, or null. Strings are jumped over with indexOf, never
 * read character by character; only the text between them is searched for suspect literals.
 */
function findLossyNumber(text: string): string | null {
  let from = 0; // always outside a string
  for (;;) {
    const open = text.indexOf('"', from);
    const gapEnd = open < 0 ? text.length : open;
    if (gapEnd - from >= SHORTEST_SUSPECT) {
      const lossy = lossyLiteralIn(text.slice(from, gapEnd));
      if (lossy !== null) return lossy;
    }
    if (open < 0) return null;
    let close = text.indexOf('"', open + 1);
    while (close > 0 && precededByOddBackslashes(text, close)) close = text.indexOf('"', close + 1);
    if (close < 0) return null; // cannot happen: the text parsed as JSON
    from = close + 1;
  }
}

/** The first lossy literal in JSON text that has no strings (`:1.5,` or a whole array of numbers). */
function lossyLiteralIn(gap: string): string | null {
  SUSPECT.lastIndex = 0;
  for (let m = SUSPECT.exec(gap); m !== null; m = SUSPECT.exec(gap)) {
    NUMBER.lastIndex = m.index;
    const literal = NUMBER.exec(gap)![0];
    // The fast path: what JavaScript clients send is already the shortest form of its double.
    const shortest = String(Number(literal));
    if (shortest !== literal && !sameDecimal(literal, shortest)) return literal;
    SUSPECT.lastIndex = m.index + literal.length;
  }
  return null;
}

function precededByOddBackslashes(text: string, at: number): boolean {
  let i = at - 1;
  while (text.charCodeAt(i) === 0x5c) i--;
  return (at - 1 - i) % 2 === 1;
}

/**
 * Whether two decimal numbers (JSON literals or `String(number)`, never Infinity there: it
 * differs from every literal) have the same value, compared as digit strings, not as floats.
 */
function sameDecimal(a: string, b: string): boolean {
  return canonicalDecimal(a) === canonicalDecimal(b);
}

/** `-?D` digits without leading or trailing zeros, `e` and the exponent of the last digit; "0" for zero (of either sign). */
function canonicalDecimal(literal: string): string {
  const match = /^(-?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(literal);
  if (match === null) return `not a decimal: ${literal}`; // Infinity, NaN
  const [, sign, int, frac = '', exp = '0'] = match;
  const digits = (int + frac).replace(/^0+/, '');
  if (digits === '') return '0';
  const significant = digits.replace(/0+$/, '');
  // An exponent too long for a double to hold exactly means the literal overflows to Infinity
  // or underflows to 0, and differs from String(Number(literal)) whatever this rounding does.
  const exponent = Number(exp) - frac.length + (digits.length - significant.length);
  return `${sign}${significant}e${exponent}`;
}
