import { AppError } from '../errors/index.js';
import { safe } from './ident.js';

/** The column types of the API and the Postgres type each creates (DESIGN "Tables"). */
export const COLUMN_TYPES = {
  string: 'text',
  integer: 'integer',
  float: 'double precision',
  boolean: 'boolean',
  uuid: 'uuid',
  datetime: 'timestamptz',
  date: 'date',
  json: 'jsonb',
} as const;
export type ColumnType = keyof typeof COLUMN_TYPES;
export const COLUMN_TYPE_NAMES = Object.keys(COLUMN_TYPES) as ColumnType[];

export const ON_DELETE = ['CASCADE', 'SET NULL', 'SET DEFAULT', 'RESTRICT', 'NO ACTION'] as const;
export type OnDelete = (typeof ON_DELETE)[number];

/** What the values of a Postgres type look like; decides how a value is checked. */
export type ValueKind =
  | 'int2'
  | 'int4'
  | 'int8'
  | 'float'
  | 'boolean'
  | 'uuid'
  | 'timestamp'
  | 'date'
  | 'json'
  | 'text'
  | 'other';

const KIND_BY_TYPNAME: Record<string, ValueKind> = {
  int2: 'int2',
  int4: 'int4',
  int8: 'int8',
  float4: 'float',
  float8: 'float',
  numeric: 'float',
  bool: 'boolean',
  uuid: 'uuid',
  timestamptz: 'timestamp',
  timestamp: 'timestamp',
  date: 'date',
  json: 'json',
  jsonb: 'json',
  text: 'text',
  varchar: 'text',
  bpchar: 'text',
  name: 'text',
  citext: 'text',
};

export function valueKind(typname: string): ValueKind {
  return KIND_BY_TYPNAME[typname] ?? 'other';
}

const API_TYPE_BY_KIND: Partial<Record<ValueKind, ColumnType>> = {
  int2: 'integer',
  int4: 'integer',
  int8: 'integer',
  float: 'float',
  boolean: 'boolean',
  uuid: 'uuid',
  timestamp: 'datetime',
  date: 'date',
  json: 'json',
  text: 'string',
};

/** The API type name of a Postgres type; types the API cannot create keep their own name. */
export function apiType(typname: string): string {
  return API_TYPE_BY_KIND[valueKind(typname)] ?? typname;
}

const INT = /^[+-]?\d{1,20}$/;
const FLOAT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d{1,4})?$/;
const UUID = /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)?(Z|z|[+-]\d{2}(:?\d{2})?)?$/;
const INT_RANGE: Record<'int2' | 'int4' | 'int8', [bigint, bigint]> = {
  int2: [-32768n, 32767n],
  int4: [-2147483648n, 2147483647n],
  int8: [-9223372036854775808n, 9223372036854775807n],
};
const MAX_TEXT = 10 * 1024 * 1024;

export interface Typed {
  name: string;
  kind: ValueKind;
  /** The Postgres type to cast a bind parameter to (catalog text, without modifiers). */
  castType: string;
}

function bad(col: Typed, what: string): AppError {
  return new AppError('INVALID_VALUE', {
    message: `Invalid value for column "${col.name}": ${what}.`,
  });
}

const DATE_PARTS = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?[^+-]*(?:[+-](\d{2}):?(\d{2})?)?$/;

/**
 * Whether a date or timestamp that matched DATE or TIMESTAMP names a real moment: the day
 * exists in its month (no 2023-02-29), the time and offset are in range (Postgres takes
 * offsets up to ±15:59, and `+02` as well as `+02:00`). Checked field by field: Date.parse
 * rolls 2024-02-30 over to March and refuses a `+02` offset.
 */
function validDate(s: string): boolean {
  const m = DATE_PARTS.exec(s);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate())
    return false;
  if (m[4] !== undefined && (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6] ?? 0) > 59)) return false;
  return m[7] === undefined || (Number(m[7]) <= 15 && Number(m[8] ?? 0) <= 59);
}

/**
 * Turns a value for `col` into its bind parameter (text or null; Postgres casts it to the
 * column type). `text` is a value from the query string, otherwise a JSON body value.
 * Anything that does not fit the type is a 400 naming the column.
 */
export function toParam(col: Typed, value: unknown, source: 'query' | 'body'): string | null {
  if (value === null) return null;
  if (value === undefined) throw bad(col, 'missing');
  const k = col.kind;
  if (k === 'json') {
    if (source === 'body') return JSON.stringify(value);
    const s = String(value);
    try {
      JSON.parse(s);
    } catch {
      throw bad(col, 'expected JSON');
    }
    return s;
  }
  if (typeof value === 'object') {
    if (k === 'other') return JSON.stringify(value);
    throw bad(col, `expected ${describe(k)}, got ${Array.isArray(value) ? 'an array' : 'an object'}`);
  }
  if (k === 'int2' || k === 'int4' || k === 'int8') {
    if (typeof value === 'number' && !Number.isInteger(value)) throw bad(col, 'expected an integer');
    const s = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : null;
    if (s === null || !INT.test(s)) throw bad(col, 'expected an integer');
    const n = BigInt(s);
    const [lo, hi] = INT_RANGE[k];
    if (n < lo || n > hi) throw bad(col, 'integer out of range');
    return n.toString();
  }
  if (k === 'float') {
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) throw bad(col, 'expected a finite number');
      return String(value);
    }
    if (typeof value !== 'string' || !FLOAT.test(value.trim())) throw bad(col, 'expected a number');
    return value.trim();
  }
  if (k === 'boolean') {
    if (typeof value === 'boolean') return String(value);
    if (value === 'true' || value === 'false') return value;
    throw bad(col, 'expected true or false');
  }
  if (typeof value !== 'string') {
    // Numbers and booleans become text for text columns ({"code": 42} stores "42").
    if (k === 'other' || k === 'text') return String(value);
    throw bad(col, `expected ${describe(k)}`);
  }
  if (value.length > MAX_TEXT) throw bad(col, 'too long');
  if (value.includes('\0')) throw bad(col, 'NUL characters are not allowed');
  if (k === 'uuid' && !UUID.test(value)) throw bad(col, 'expected a uuid');
  if (k === 'date' && !(DATE.test(value) && validDate(value))) throw bad(col, 'expected a date (YYYY-MM-DD)');
  if (k === 'timestamp' && !(TIMESTAMP.test(value) && validDate(value)))
    throw bad(col, 'expected an ISO 8601 timestamp');
  return value;
}

function describe(k: ValueKind): string {
  switch (k) {
    case 'text':
      return 'a string';
    case 'uuid':
      return 'a uuid string';
    case 'timestamp':
      return 'an ISO 8601 timestamp string';
    case 'date':
      return 'a date string';
    default:
      return 'a scalar value';
  }
}

/** A bind placeholder cast to the column type, e.g. `$3::integer`. */
export function cast(index: number, col: Typed): string {
  return `$${index}::${col.castType}`;
}

/** Client text safe to echo (re-exported for error messages). */
export { safe };
