// Compiled reads, remembered per table and query-string shape: the SQL text (and its prepared
// name) and where each bind parameter comes from, so a read whose shape was seen skips the
// parser and the compiler. The values stay bind parameters, checked per request by the same
// toParam as a compile. docs/decisions.md "Compiled reads and verified tokens, cached".
import { randomUUID } from 'node:crypto';
import { shaped, type Statement as Prepared } from '../db/types.js';
import { Params, patternValue } from './filters.js';
import { IDENT } from './ident.js';
import { decode, LIMITS, parseInt10, parseRecordsQuery, type RecordsQuery } from './query.js';
import type { Statement } from './compile.js';
import type { ColumnMeta } from './schema.js';
import { cast, toParam, type Typed } from './types.js';

/** Shapes kept (least recently used first out); a shape's SQL longer than this is not kept. */
export const READ_CACHE_MAX = 500;
const MAX_SQL = 16_384;
const MAX_QUERY = 2048;

// Filters whose value the compiler only binds (`<col> <op> $n`): their values are the slots.
const SLOT_FILTER = /^(not\.)?(eq|neq|gt|gte|lt|lte|like|ilike|match|imatch|isdistinct)\.(.*)$/s;
const RESERVED = new Set(['select', 'order', 'limit', 'offset', 'columns', 'on_conflict', 'and', 'or', 'not']);
// Stands for a slot's value while the shape is compiled: no client text can hold it.
const MARK = `\u0002${randomUUID()}\u0002`;

/** A value of the query string that varies within one shape. */
type Slot = { kind: 'filter'; op: string; value: string } | { kind: 'limit' | 'offset'; value: number };

/** A query string split into its shape (the cache key) and its slots' values. */
export interface Shape {
  key: string;
  slots: Slot[];
  limit: number | null;
  offset: number | null;
}

/**
 * The shape of a raw query string: every pair kept as written, except `<column>=[not.]<op>.<value>`
 * of the operators above and `limit`/`offset`, whose values become slots. Null: not cached
 * (too long; a malformed one is left to the parser to refuse).
 */
export function shapeOf(raw: string): Shape | null {
  if (raw.length > MAX_QUERY) return null;
  const parts: string[] = [];
  const slots: Slot[] = [];
  const shape: Shape = { key: '', slots, limit: null, offset: null };
  for (const part of raw.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const key = eq < 0 ? part : part.slice(0, eq);
    if (!IDENT.test(key)) {
      parts.push(`L${part}`);
      continue;
    }
    const value = decodeOrNull(eq < 0 ? '' : part.slice(eq + 1));
    if (value === null) return null;
    if (key === 'limit' || key === 'offset') {
      const n = pageValue(key, value);
      if (shape[key] !== null || n === null) return null; // given twice or not a number: the parser's 400
      shape[key] = n;
      slots.push({ kind: key, value: n });
      parts.push(`${key}=`);
      continue;
    }
    const m = RESERVED.has(key) ? null : SLOT_FILTER.exec(value);
    if (!m) {
      parts.push(`L${part}`);
      continue;
    }
    slots.push({ kind: 'filter', op: m[2]!, value: m[3]! });
    parts.push(`${key}=${m[1] ?? ''}${m[2]}.`);
  }
  if (slots.length > LIMITS.params) return null;
  shape.key = parts.join('&');
  return shape;
}

/** A `limit` or `offset` value as the parser takes it, or null where it refuses it. */
function pageValue(key: 'limit' | 'offset', value: string): number | null {
  try {
    return parseInt10(value, key, key === 'limit' ? 1 : 0, key === 'limit' ? LIMITS.maxLimit : LIMITS.maxOffset);
  } catch {
    return null;
  }
}

function decodeOrNull(s: string): string | null {
  try {
    return decode(s);
  } catch {
    return null;
  }
}

/** Where one bind parameter comes from: a value of the shape itself, or a slot (checked for `col`). */
type Source = { value: unknown } | { slot: number; col: Typed | null };

/** A compiled shape: the statement's text, its prepared name, and each parameter's source. */
interface Entry {
  version: string;
  prepared: Prepared;
  text: string;
  sources: Source[];
  /** count=planned|estimated: the statement whose plan estimates the total, on the first `n` parameters. */
  estimate?: { text: string; n: number };
}

/** Params that keep the marks of slots as they are, with the column each typed one is for. */
class Recorder extends Params {
  private readonly cols = new Map<number, Typed>();

  override typed(col: ColumnMeta, v: unknown, source: 'query' | 'body'): string {
    if (slotOf(v) === null) return super.typed(col, v, source);
    this.values.push(v);
    this.cols.set(this.values.length - 1, col);
    return cast(this.values.length, col);
  }

  /** Each parameter's source: a mark is its slot, anything else a value of the shape. */
  sources(): Source[] {
    return this.values.map((v, i) => {
      const slot = slotOf(v);
      return slot === null ? { value: v } : { slot, col: this.cols.get(i) ?? null };
    });
  }
}

function slotOf(v: unknown): number | null {
  return typeof v === 'string' && v.startsWith(MARK) ? Number(v.slice(MARK.length)) : null;
}

/** A read's statement by shape, for schema version `version` (see SchemaCache.version). */
export class ReadCache {
  private readonly entries = new Map<string, Entry | null>();

  constructor(private readonly max = READ_CACHE_MAX) {}

  /**
   * The statement for `shape` with its values bound (a value that does not fit its column
   * throws the compiler's 400), undefined when not known for this version, null when the shape
   * is not cacheable.
   */
  get(key: string, version: string, shape: Shape): { read: Statement; prepared: Prepared } | null | undefined {
    const e = this.entries.get(key);
    if (e === undefined) return undefined;
    this.entries.delete(key); // least recently used goes first: move to the end
    if (e !== null && e.version !== version) return undefined;
    this.entries.set(key, e);
    if (e === null) return null;
    const values = e.sources.map((s) => ('value' in s ? s.value : slotValue(shape.slots[s.slot]!, s.col)));
    const read: Statement = { text: e.text, values };
    if (e.estimate) read.estimate = { text: e.estimate.text, values: values.slice(0, e.estimate.n) };
    return { read, prepared: e.prepared };
  }

  /**
   * Keeps the shape as compiled with marks for its slots (`stmt`, null if that failed); a
   * shape whose marks do not all end up as bind parameters is kept as not cacheable (null).
   */
  keep(key: string, version: string, shape: Shape, stmt: Statement | null, p: Recorder): void {
    const sources = p.sources();
    const used = new Set(sources.map((s) => ('slot' in s ? s.slot : -1)));
    // Every slot bound, and no mark anywhere else (in the text, or inside a value of the shape).
    const complete =
      stmt !== null &&
      used.size - (used.has(-1) ? 1 : 0) === shape.slots.length &&
      !stmt.text.includes(MARK) &&
      !sources.some((s) => 'value' in s && typeof s.value === 'string' && s.value.includes(MARK));
    let entry: Entry | null = null;
    if (complete && stmt.text.length <= MAX_SQL) {
      entry = { version, text: stmt.text, prepared: shaped(stmt.text), sources };
      if (stmt.estimate) entry.estimate = { text: stmt.estimate.text, n: stmt.estimate.values.length };
    }
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, entry);
  }

  /** Forgets every shape (tests; a schema change is seen through the version). */
  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

/** A slot's bind parameter: a filter's value as the compiler would bind it, or a page number. */
function slotValue(slot: Slot, col: Typed | null): unknown {
  if (slot.kind !== 'filter') return slot.value;
  return col ? toParam(col, slot.value, 'query') : patternValue(slot.op, slot.value);
}

/** The query with a mark in place of each slot's value (limit and offset: on the parsed query). */
function markedQuery(raw: string, shape: Shape): RecordsQuery {
  let n = 0;
  const parts: string[] = [];
  const marks: Record<string, string> = {};
  for (const [i, slot] of shape.slots.entries()) {
    if (slot.kind !== 'filter') marks[slot.kind] = `${MARK}${i}`;
  }
  for (const part of raw.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const key = eq < 0 ? part : part.slice(0, eq);
    if (key === 'limit' || key === 'offset') {
      n++;
      continue;
    }
    const m = IDENT.test(key) && !RESERVED.has(key) ? SLOT_FILTER.exec(decode(eq < 0 ? '' : part.slice(eq + 1))) : null;
    if (m) {
      parts.push(`${key}=${m[1] ?? ''}${m[2]}.${encodeURIComponent(`${MARK}${n++}`)}`);
    } else parts.push(part);
  }
  const q = parseRecordsQuery(parts.join('&'));
  if (marks.limit) q.limit = marks.limit as unknown as number;
  if (marks.offset) q.offset = marks.offset as unknown as number;
  return q;
}

/** A read ready to run: the statement, its prepared form, and the page it asks for. */
export interface ReadPlan {
  read: Statement;
  prepared: Prepared;
  offset: number;
  limit: number;
}

/** What of a read's options decides its SQL (besides the query string). */
export interface ReadShapeOptions {
  range?: { offset: number; limit: number };
  format?: string;
  count?: string | null;
  schema?: string;
}

/** A read's cache key and the shape of its query string; null when it is not cached (a Range header, a name that is not one). */
function readKey(table: string, raw: string, opts: ReadShapeOptions): { key: string; shape: Shape } | null {
  const shape = opts.range || !IDENT.test(table) ? null : shapeOf(raw);
  if (!shape) return null;
  return {
    key: `${opts.schema ?? 'public'}\n${table}\n${opts.format ?? 'json'}\n${opts.count ?? ''}\n${shape.key}`,
    shape,
  };
}

/**
 * The read's compiled statement with this request's values bound, when `cache` has its shape
 * for schema version `version`; null otherwise. A value that does not fit its column throws the
 * compiler's 400. The front lane answers a read only when this finds it (http/lanes/records.ts).
 */
export function cachedRead(
  cache: ReadCache,
  version: string,
  table: string,
  raw: string,
  opts: ReadShapeOptions,
): ReadPlan | null {
  const k = readKey(table, raw, opts);
  const hit = k && cache.get(k.key, version, k.shape);
  return hit ? { ...hit, offset: k.shape.offset ?? 0, limit: k.shape.limit ?? 100 } : null;
}

/**
 * A read's statement: the compiled shape when `cache` has it for the schema's current version,
 * else parsed and compiled by `compile` (the request's own errors come from there), its shape
 * then kept. A Range header's page is not a slot: such reads are compiled every time.
 */
export async function readStatement(
  cache: ReadCache,
  schema: { readonly version: string },
  table: string,
  raw: string,
  opts: ReadShapeOptions,
  compile: (q: RecordsQuery, p?: Params) => Promise<Statement>,
): Promise<ReadPlan> {
  const version = schema.version;
  const k = readKey(table, raw, opts);
  const hit = k ? cache.get(k.key, version, k.shape) : null;
  if (hit) return { ...hit, offset: k!.shape.offset ?? 0, limit: k!.shape.limit ?? 100 };
  const q = parseRecordsQuery(raw);
  if (opts.range) Object.assign(q, { offset: opts.range.offset, limit: opts.range.limit });
  const read = await compile(q);
  if (hit === undefined && k) {
    // The version the marked compile sees: the request's own compile has loaded the schema
    // where it needed to (the first read after DDL), so the shape is kept from that read on.
    const compiledFor = schema.version;
    const p = new Recorder();
    let marked: Statement | null = null;
    try {
      marked = await compile(markedQuery(raw, k.shape), p);
    } catch {
      /* not cacheable */
    }
    // Kept only if nothing changed the schema during the marked compile.
    if (schema.version === compiledFor) cache.keep(k.key, compiledFor, k.shape, marked, p);
  }
  return { read, prepared: shaped(read.text), offset: q.offset ?? 0, limit: q.limit ?? 100 };
}
