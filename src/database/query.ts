import { AppError } from '../errors/index.js';
import { IDENT, safe } from './ident.js';

/** The filter operators of the records API (PostgREST names). */
export const OPERATORS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'like', 'ilike', 'in', 'is'] as const;
export type Operator = (typeof OPERATORS)[number];
const OPERATOR_SET = new Set<string>(OPERATORS);
export const IS_VALUES = ['null', 'true', 'false', 'unknown'] as const;

/** A filter on one column: `col=not.op.value`; `value` is a list for `in`. */
export interface Condition {
  type: 'cond';
  column: string;
  op: Operator;
  negate: boolean;
  value: string | string[];
}
/** A logic tree: `or=(...)`, `and=(...)`, nested `not.or(...)`. */
export interface Group {
  type: 'and' | 'or';
  negate: boolean;
  items: Filter[];
}
export type Filter = Condition | Group;

export interface OrderKey {
  column: string;
  dir: 'asc' | 'desc';
  nulls: 'first' | 'last' | null;
}

/** The AST of a records query string. */
export interface RecordsQuery {
  /** Column names, or null for all columns. */
  select: string[] | null;
  /** ANDed together. */
  filters: Filter[];
  order: OrderKey[];
  limit: number | null;
  offset: number | null;
  onConflict: string[] | null;
}

/** Bounds on what one query string may ask for. */
export const LIMITS = {
  queryLength: 16_384,
  params: 64,
  nodes: 256,
  depth: 6,
  listItems: 1000,
  values: 4000,
  orderKeys: 16,
  selectColumns: 256,
  maxLimit: 1000,
  maxOffset: 1_000_000_000,
};

const RESERVED = new Set(['select', 'order', 'limit', 'offset', 'on_conflict', 'and', 'or', 'not.and', 'not.or']);

function invalid(message: string): AppError {
  return new AppError('INVALID_QUERY', { message });
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    throw invalid('The query string has a malformed percent-encoding.');
  }
}

/** Splits a raw query string (without `?`) into decoded key/value pairs, in order. */
export function splitQuery(raw: string): Array<[string, string]> {
  if (raw.length > LIMITS.queryLength) throw invalid(`The query string is longer than ${LIMITS.queryLength} characters.`);
  const pairs: Array<[string, string]> = [];
  for (const part of raw.split('&')) {
    if (part === '') continue;
    if (pairs.length >= LIMITS.params) throw invalid(`At most ${LIMITS.params} query parameters are allowed.`);
    const eq = part.indexOf('=');
    const key = decode(eq < 0 ? part : part.slice(0, eq));
    const value = decode(eq < 0 ? '' : part.slice(eq + 1));
    pairs.push([key, value]);
  }
  return pairs;
}

function column(name: string, where: string): string {
  if (!IDENT.test(name)) throw invalid(`"${safe(name)}" in ${where} is not a valid column name.`);
  return name;
}

/** Counts nodes and values across one query so no input can make the parser do unbounded work. */
class Budget {
  nodes = 0;
  values = 0;
  node(): void {
    if (++this.nodes > LIMITS.nodes) throw invalid(`At most ${LIMITS.nodes} filter conditions are allowed.`);
  }
  value(n = 1): void {
    this.values += n;
    if (this.values > LIMITS.values) throw invalid(`At most ${LIMITS.values} filter values are allowed.`);
  }
}

/** A cursor over the text of a logic tree or an `in` list. */
class Cursor {
  pos = 0;
  constructor(readonly text: string) {}
  peek(): string | undefined {
    return this.text[this.pos];
  }
  eat(ch: string): boolean {
    if (this.text[this.pos] === ch) {
      this.pos++;
      return true;
    }
    return false;
  }
  expect(ch: string): void {
    if (!this.eat(ch)) throw invalid(`Expected "${ch}" at position ${this.pos + 1} of "${safe(this.text)}".`);
  }
  done(): boolean {
    return this.pos >= this.text.length;
  }
  /** A double-quoted value with \\ and \" escapes. */
  quoted(): string {
    this.expect('"');
    let out = '';
    for (;;) {
      const ch = this.text[this.pos++];
      if (ch === undefined) throw invalid(`Unterminated quoted value in "${safe(this.text)}".`);
      if (ch === '"') return out;
      if (ch === '\\') {
        const next = this.text[this.pos++];
        if (next === undefined) throw invalid(`Unterminated quoted value in "${safe(this.text)}".`);
        out += next;
      } else out += ch;
    }
  }
  /** Text up to (not including) the first of `stops` at this level. */
  until(stops: string): string {
    const start = this.pos;
    while (this.pos < this.text.length && !stops.includes(this.text[this.pos]!)) this.pos++;
    return this.text.slice(start, this.pos);
  }
  /** A dotted word: letters, digits, _ (a column, operator or keyword). */
  word(): string {
    const start = this.pos;
    while (this.pos < this.text.length && /[A-Za-z0-9_]/.test(this.text[this.pos]!)) this.pos++;
    return this.text.slice(start, this.pos);
  }
}

/** `(a,b,"c,d")` → ['a','b','c,d']. */
function parseList(c: Cursor, budget: Budget): string[] {
  c.expect('(');
  const items: string[] = [];
  if (c.eat(')')) return items;
  for (;;) {
    if (items.length >= LIMITS.listItems) throw invalid(`An "in" list may have at most ${LIMITS.listItems} values.`);
    items.push(c.peek() === '"' ? c.quoted() : c.until(',)'));
    budget.value();
    if (c.eat(')')) return items;
    c.expect(',');
  }
}

/** `op.value` after the column (and optional `not.`); `inTree` stops a bare value at `,` or `)`. */
function parseOpValue(c: Cursor, col: string, budget: Budget, inTree: boolean): Condition {
  let negate = false;
  let op = c.word();
  if (op === 'not') {
    negate = true;
    c.expect('.');
    op = c.word();
  }
  if (!OPERATOR_SET.has(op)) {
    throw invalid(`Unknown operator "${safe(op)}" for column "${col}"; use one of ${OPERATORS.join(', ')}.`);
  }
  if (!c.eat('.')) throw invalid(`The filter on column "${col}" must look like <operator>.<value>, e.g. ${op}.1.`);
  budget.node();
  let value: string | string[];
  if (op === 'in') value = parseList(c, budget);
  else {
    value = inTree ? (c.peek() === '"' ? c.quoted() : c.until(',)')) : c.text.slice(c.pos);
    if (!inTree) c.pos = c.text.length;
    budget.value();
    if (op === 'is') {
      const v = value.toLowerCase();
      if (!(IS_VALUES as readonly string[]).includes(v)) {
        throw invalid(`"is" takes null, true, false or unknown (column "${col}").`);
      }
      value = v;
    }
  }
  return { type: 'cond', column: col, op: op as Operator, negate, value };
}

/** The items of a logic tree: `(item,item,...)`. */
function parseGroupBody(c: Cursor, type: 'and' | 'or', negate: boolean, budget: Budget, depth: number): Group {
  if (depth > LIMITS.depth) throw invalid(`Logic trees may be nested at most ${LIMITS.depth} deep.`);
  budget.node();
  c.expect('(');
  const items: Filter[] = [];
  for (;;) {
    items.push(parseTreeItem(c, budget, depth));
    if (c.eat(')')) break;
    c.expect(',');
  }
  return { type, negate, items };
}

function parseTreeItem(c: Cursor, budget: Budget, depth: number): Filter {
  let word = c.word();
  let negate = false;
  if (word === 'not' && c.peek() === '.') {
    const save = c.pos;
    c.pos++;
    const next = c.word();
    if ((next === 'and' || next === 'or') && c.peek() === '(') {
      word = next;
      negate = true;
    } else c.pos = save;
  }
  if ((word === 'and' || word === 'or') && c.peek() === '(') return parseGroupBody(c, word, negate, budget, depth + 1);
  const col = column(word, 'a logic tree');
  c.expect('.');
  return parseOpValue(c, col, budget, true);
}

/** Parses a filter value of the top level, e.g. `gte.18`, `not.in.(1,2)`. */
export function parseCondition(col: string, value: string, budget = new Budget()): Condition {
  const c = new Cursor(value);
  const cond = parseOpValue(c, col, budget, false);
  if (!c.done()) throw invalid(`Unexpected text after the value list of column "${col}".`);
  return cond;
}

function parseOrder(value: string): OrderKey[] {
  const keys = value.split(',');
  if (keys.length > LIMITS.orderKeys) throw invalid(`At most ${LIMITS.orderKeys} order keys are allowed.`);
  return keys.map((k) => {
    const parts = k.trim().split('.');
    const key: OrderKey = { column: column(parts[0] ?? '', 'order'), dir: 'asc', nulls: null };
    for (const p of parts.slice(1)) {
      if (p === 'asc' || p === 'desc') key.dir = p;
      else if (p === 'nullsfirst') key.nulls = 'first';
      else if (p === 'nullslast') key.nulls = 'last';
      else throw invalid(`Order "${safe(k)}" must be <column>[.asc|.desc][.nullsfirst|.nullslast].`);
    }
    return key;
  });
}

function parseColumnList(value: string, what: string, max: number): string[] {
  const cols = value.split(',').map((s) => s.trim());
  if (cols.length > max) throw invalid(`At most ${max} columns are allowed in ${what}.`);
  return [...new Set(cols.map((s) => column(s, what)))];
}

function parseInt10(value: string, name: string, min: number, max: number): number {
  if (!/^\d{1,10}$/.test(value) || Number(value) < min || Number(value) > max) {
    throw invalid(`${name} must be a whole number from ${min} to ${max}.`);
  }
  return Number(value);
}

/** Parses a raw query string (without `?`) into the records query AST. Bounded; throws 400s. */
export function parseRecordsQuery(raw: string): RecordsQuery {
  const q: RecordsQuery = { select: null, filters: [], order: [], limit: null, offset: null, onConflict: null };
  const budget = new Budget();
  const seen = new Set<string>();
  for (const [key, value] of splitQuery(raw)) {
    if (RESERVED.has(key)) {
      if (key !== 'and' && key !== 'or' && key !== 'not.and' && key !== 'not.or') {
        if (seen.has(key)) throw invalid(`"${key}" may be given only once.`);
        seen.add(key);
      }
    }
    switch (key) {
      case 'select':
        q.select = value.trim() === '*' || value.trim() === '' ? null : parseColumnList(value, 'select', LIMITS.selectColumns);
        break;
      case 'order':
        q.order = parseOrder(value);
        break;
      case 'limit':
        q.limit = parseInt10(value, 'limit', 1, LIMITS.maxLimit);
        break;
      case 'offset':
        q.offset = parseInt10(value, 'offset', 0, LIMITS.maxOffset);
        break;
      case 'on_conflict':
        q.onConflict = parseColumnList(value, 'on_conflict', 32);
        break;
      case 'and':
      case 'or':
      case 'not.and':
      case 'not.or': {
        const c = new Cursor(value);
        const group = parseGroupBody(c, key.endsWith('and') ? 'and' : 'or', key.startsWith('not.'), budget, 1);
        if (!c.done()) throw invalid(`Unexpected text after the ${key} tree.`);
        q.filters.push(group);
        break;
      }
      default:
        q.filters.push(parseCondition(column(key, 'the query string'), value, budget));
    }
  }
  return q;
}
