import { AppError } from '../errors/index.js';
import { IDENT, isName, maskQuoted, nameOf, safe } from './ident.js';
import {
  IS_VALUES,
  OPERATORS,
  type Condition,
  type Filter,
  type Group,
  type JsonStep,
  type Operator,
  type OrderKey,
  type ReadNode,
  type RecordsQuery,
} from './ast.js';
import { parseSelect, splitJsonPath } from './grammar.js';
import { Cursor } from './cursor.js';

export { OPERATORS, IS_VALUES } from './ast.js';
export type { Operator, Condition, Group, Filter, OrderKey, RecordsQuery } from './ast.js';
const OPERATOR_SET = new Set<string>(OPERATORS);
const QUANTIFIED = new Set(['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'like', 'ilike', 'match', 'imatch']);
const FTS = new Set(['fts', 'plfts', 'phfts', 'wfts']);

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

function invalid(message: string): AppError {
  return new AppError('INVALID_QUERY', { message });
}

export function decode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    throw invalid('The query string has a malformed percent-encoding.');
  }
}

/** Splits a raw query string (without `?`) into decoded key/value pairs, in order. */
export function splitQuery(raw: string): Array<[string, string]> {
  if (raw.length > LIMITS.queryLength)
    throw invalid(`The query string is longer than ${LIMITS.queryLength} characters.`);
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

/** A plain or quoted (masked) column name; the schema check comes when the SQL is built. */
function column(name: string, where: string): string {
  const n = nameOf(name);
  if (n === null)
    throw invalid(
      `"${safe(name)}" in ${where} is not a valid column name; quote a name with other characters, e.g. "my col".`,
    );
  return n;
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

/** `(a,b,"c,d")` (or `{a,b}` after a quantifier) → ['a','b','c,d']. */
function parseList(c: Cursor, budget: Budget, open = '(', close = ')'): string[] {
  c.expect(open);
  const items: string[] = [];
  if (c.eat(close)) return items;
  for (;;) {
    if (items.length >= LIMITS.listItems) throw invalid(`A value list may have at most ${LIMITS.listItems} values.`);
    items.push(c.peek() === '"' ? c.quoted() : c.until(`,${close}`));
    budget.value();
    if (c.eat(close)) return items;
    c.expect(',');
  }
}

/** A value inside a logic tree: quoted, or up to `,`/`)` outside `{...}` (array literals). */
function treeValue(c: Cursor): string {
  if (c.peek() === '"') return c.quoted();
  const start = c.pos;
  let braces = 0;
  while (!c.done()) {
    const ch = c.peek()!;
    if (ch === '{') braces++;
    else if (ch === '}') braces--;
    else if (braces <= 0 && (ch === ',' || ch === ')')) break;
    c.pos++;
  }
  return c.text.slice(start, c.pos);
}

/** `(any)`, `(all)` or a text search configuration after an operator. */
function parseModifier(c: Cursor, op: string, col: string): Pick<Condition, 'quantifier' | 'config'> {
  if (!c.eat('(')) return {};
  const word = c.word();
  c.expect(')');
  if (FTS.has(op) && IDENT.test(word)) return { config: word };
  if (QUANTIFIED.has(op) && (word === 'any' || word === 'all')) return { quantifier: word };
  throw invalid(
    `"${op}(${safe(word)})" on column "${col}" is not valid: use (any)/(all) after eq, like, ilike..., or a text search configuration after fts.`,
  );
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
  const mod = parseModifier(c, op, col);
  if (!c.eat('.')) throw invalid(`The filter on column "${col}" must look like <operator>.<value>, e.g. ${op}.1.`);
  budget.node();
  let value: string | string[];
  if (op === 'in') value = parseList(c, budget);
  else if (mod.quantifier) value = parseList(c, budget, '{', '}');
  else {
    value = inTree ? treeValue(c) : c.text.slice(c.pos);
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
  return { type: 'cond', column: col, op: op as Operator, negate, value, ...mod };
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
  if (c.peek() === '"') return treeCondition(c, quotedName(c, 'a logic tree'), budget);
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
  return treeCondition(c, column(word, 'a logic tree'), budget);
}

/** `"my col"` inside a logic tree (PostgREST's quoted name). */
function quotedName(c: Cursor, where: string): string {
  const name = c.quoted();
  if (!isName(name)) throw invalid(`"${safe(name)}" in ${where} is not a valid name.`);
  return name;
}

/** `col[->key…->>key].op.value` inside a logic tree: the column's JSON path, then the condition. */
function treeCondition(c: Cursor, col: string, budget: Budget): Condition {
  const path: JsonStep[] = [];
  while (c.text.startsWith('->', c.pos)) {
    if (path.length >= 16) throw invalid(`A JSON path may have at most 16 steps (column "${safe(col)}").`);
    if (path[path.length - 1]?.text) throw invalid(`"->>" must be the last step of the JSON path of "${safe(col)}".`);
    const text = c.text.startsWith('->>', c.pos);
    c.pos += text ? 3 : 2;
    const key = c.peek() === '"' ? quotedName(c, 'a JSON path') : c.word();
    if (key === '' || key.length > 63)
      throw invalid(`The JSON path of "${safe(col)}" needs a key (letters, digits, _ or "quoted") after ->.`);
    path.push({ key, text });
  }
  c.expect('.');
  const cond = parseOpValue(c, col, budget, true);
  return path.length ? { ...cond, path } : cond;
}

/** Parses a filter value of the top level, e.g. `gte.18`, `not.in.(1,2)`. */
export function parseCondition(col: string, value: string, budget = new Budget()): Condition {
  const c = new Cursor(value);
  const cond = parseOpValue(c, col, budget, false);
  if (!c.done()) throw invalid(`Unexpected text after the value list of column "${col}".`);
  return cond;
}

const ORDER_KEY = /^(?:([^.()]+)\(([^()]*)\)|([^.()]*))((?:\.[a-z]+)*)$/;

function parseOrder(value: string): OrderKey[] {
  const keys = maskQuoted(value).split(',');
  if (keys.length > LIMITS.orderKeys) throw invalid(`At most ${LIMITS.orderKeys} order keys are allowed.`);
  return keys.map((k) => {
    const m = ORDER_KEY.exec(k.trim());
    const shape = `Order "${safe(k)}" must be <column>[.asc|.desc][.nullsfirst|.nullslast] (or <relation>(<column>) for a to-one embedded relation).`;
    if (!m) throw invalid(shape);
    const raw = m[2] ?? m[3] ?? '';
    const json = raw.includes('->') ? splitJsonPath(raw) : null;
    const key: OrderKey = { column: json ? json.name : column(raw, 'order'), dir: 'asc', nulls: null };
    if (json) key.path = json.path;
    if (m[1]) key.relation = column(m[1], 'order');
    for (const p of m[4]!.split('.').slice(1)) {
      if (p === 'asc' || p === 'desc') key.dir = p;
      else if (p === 'nullsfirst') key.nulls = 'first';
      else if (p === 'nullslast') key.nulls = 'last';
      else throw invalid(shape);
    }
    return key;
  });
}

function parseColumnList(value: string, what: string, max: number): string[] {
  // `columns="a","b"` (postgrest-js quotes each name).
  const cols = maskQuoted(value)
    .split(',')
    .map((s) => s.trim());
  if (cols.length > max) throw invalid(`At most ${max} columns are allowed in ${what}.`);
  return [...new Set(cols.map((s) => column(s, what)))];
}

export function parseInt10(value: string, name: string, min: number, max: number): number {
  if (!/^\d{1,10}$/.test(value) || Number(value) < min || Number(value) > max) {
    throw invalid(`${name} must be a whole number from ${min} to ${max}.`);
  }
  return Number(value);
}

const emptyNode = (): ReadNode => ({ select: null, filters: [], order: [], limit: null, offset: null });

/** Splits `author.org.name` into the embedded path and the last part (`not.or` stays one part). */
function splitKey(key: string): { path: string[]; last: string } {
  const parts = key.split('.');
  let last = parts.pop()!;
  if ((last === 'or' || last === 'and') && parts[parts.length - 1] === 'not') last = `${parts.pop()}.${last}`;
  return { path: parts.map((p) => column(p, 'an embedded filter')), last };
}

/** Applies one `key=value` (a filter, order, limit, offset or logic tree) to a read node. */
function applyToNode(node: ReadNode, key: string, value: string, budget: Budget, seen: Set<string>): void {
  if (key === 'order' || key === 'limit' || key === 'offset') {
    if (seen.has(key)) throw invalid(`"${key}" may be given only once.`);
    seen.add(key);
  }
  if (key === 'order') node.order = parseOrder(value);
  else if (key === 'limit') node.limit = parseInt10(value, 'limit', 1, LIMITS.maxLimit);
  else if (key === 'offset') node.offset = parseInt10(value, 'offset', 0, LIMITS.maxOffset);
  else if (key === 'and' || key === 'or' || key === 'not.and' || key === 'not.or') {
    const c = new Cursor(value);
    node.filters.push(parseGroupBody(c, key.endsWith('and') ? 'and' : 'or', key.startsWith('not.'), budget, 1));
    if (!c.done()) throw invalid(`Unexpected text after the ${key} tree.`);
  } else if (key.includes('->')) {
    // `data->a->>b=eq.x`: a filter on a JSON path of the column.
    const { name, path } = splitJsonPath(key);
    node.filters.push({ ...parseCondition(name, value, budget), path });
  } else node.filters.push(parseCondition(column(key, 'the query string'), value, budget));
}

/** Parses a raw query string (without `?`) into the records query AST. Bounded; throws 400s. */
export function parseRecordsQuery(raw: string): RecordsQuery {
  const q: RecordsQuery = { ...emptyNode(), onConflict: null, columns: null };
  const budget = new Budget();
  const seen = new Set<string>();
  const embedded = new Map<string, { path: string[]; pairs: Array<[string, string]> }>();
  for (const [key, value] of splitQuery(raw)) {
    if (key === 'select' || key === 'on_conflict' || key === 'columns') {
      if (seen.has(key)) throw invalid(`"${key}" may be given only once.`);
      seen.add(key);
      if (key === 'select') q.select = parseSelect(value);
      else if (key === 'on_conflict') q.onConflict = parseColumnList(value, 'on_conflict', 32);
      else q.columns = parseColumnList(value, 'columns', LIMITS.selectColumns);
      continue;
    }
    const { path, last } = splitKey(maskQuoted(key));
    if (!path.length) {
      applyToNode(q, last, value, budget, seen);
      continue;
    }
    const id = path.join('.');
    const entry = embedded.get(id) ?? { path, pairs: [] };
    entry.pairs.push([last, value]);
    embedded.set(id, entry);
  }
  for (const { path, pairs } of embedded.values()) {
    const node = findEmbed(q, path);
    const nodeSeen = new Set<string>();
    for (const [k, v] of pairs) applyToNode(node, k, v, budget, nodeSeen);
  }
  return q;
}

/** The read node of the embedded relation at `path` (by alias or name), or a 400. */
function findEmbed(root: ReadNode, path: string[]): ReadNode {
  let node = root;
  for (const name of path) {
    const next = node.select?.find((i) => i.type === 'embed' && (i.alias ?? i.relation) === name);
    if (next?.type !== 'embed') {
      throw new AppError('INVALID_QUERY', {
        message: `"${path.join('.')}" in a filter or order is not an embedded relation of select.`,
        nextActions: `Embed it first, e.g. select=*,${name}(*), then filter with ${path.join('.')}.<column>=eq.<value>.`,
      });
    }
    node = next.node;
  }
  return node;
}
