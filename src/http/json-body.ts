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

/**
 * Parses a JSON request body (an empty one is not JSON), refusing what would otherwise fail
 * later or change silently: nesting deeper than MAX_JSON_DEPTH, `__proto__` or
 * `constructor.prototype` keys, and strings with a lone UTF-16 surrogate (Postgres would
 * store U+FFFD in its place).
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
      message: 'The JSON body has a string with a lone UTF-16 surrogate (e.g. "\\ud800"); send well-formed Unicode text.',
    });
  }
  return value;
}

/**
 * Fastify's content-type parser for application/json (registered with parseAs: 'buffer'). JSON
 * is UTF-8: other bytes are refused rather than decoded to U+FFFD.
 */
export function jsonBodyParser(_request: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: unknown) => void): void {
  try {
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
