import { AppError } from '../errors/index.js';
import {
  AGGREGATES,
  type AggregateFn,
  type AggregateItem,
  type ColumnItem,
  type EmbedItem,
  type JsonStep,
  type SelectItem,
} from './ast.js';
import { maskQuoted, nameOf, safe } from './ident.js';

/** Casts `col::type` may use in select (a fixed list: type names are not bind parameters). */
export const CASTS = new Set([
  'text',
  'varchar',
  'int',
  'int2',
  'int4',
  'int8',
  'integer',
  'smallint',
  'bigint',
  'numeric',
  'float4',
  'float8',
  'real',
  'boolean',
  'bool',
  'json',
  'jsonb',
  'date',
  'timestamp',
  'timestamptz',
  'uuid',
]);

const MAX_ITEMS = 256;
const MAX_DEPTH = 6;

function invalid(message: string, nextActions?: string): AppError {
  return new AppError('INVALID_QUERY', {
    message,
    nextActions:
      nextActions ??
      'Write select as a comma list of columns and embedded relations, e.g. select=id,title,author:profiles(id,name).',
  });
}

/** A plain or quoted (masked, see `maskQuoted`) name; checked against the schema later. */
function ident(s: string, what: string): string {
  const name = nameOf(s);
  if (name === null)
    throw invalid(`"${safe(s)}" in select is not a valid ${what}; quote a name with other characters, e.g. "my col".`);
  return name;
}

/** Splits `a,b(c,d),e` at the commas of the top level. */
function splitTop(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '(') depth++;
    else if (ch === ')') {
      if (--depth < 0) throw invalid(`Unbalanced ")" in select "${safe(text)}".`);
    } else if (ch === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  if (depth !== 0) throw invalid(`Unbalanced "(" in select "${safe(text)}".`);
  parts.push(text.slice(start));
  return parts;
}

/** `alias:` at the front (not the `::` of a cast). */
function takeAlias(item: string): { alias: string | null; rest: string } {
  const m = /^([A-Za-z_][A-Za-z0-9_]*|\x01[0-9a-f]*\x01):(?!:)/.exec(item);
  return m ? { alias: ident(m[1]!, 'alias'), rest: item.slice(m[0].length) } : { alias: null, rest: item };
}

function parseEmbed(alias: string | null, head: string, body: string, depth: number): EmbedItem {
  const [relation, ...marks] = head.split('!');
  let hint: string | null = null;
  let inner = false;
  for (const m of marks) {
    if (m === 'inner') inner = true;
    else if (m === 'left') inner = false;
    else if (hint === null) hint = ident(m, 'relation hint');
    else throw invalid(`"${safe(head)}" has more than one hint; use <relation>!<hint>!inner.`);
  }
  const embed: EmbedItem = {
    type: 'embed',
    alias,
    relation: ident(relation ?? '', 'relation name'),
    hint,
    inner,
    node: { select: parseItems(body, depth + 1), filters: [], order: [], limit: null, offset: null },
  };
  if (body.trim() === '') embed.empty = true;
  return embed;
}

function checkCast(cast: string): string {
  if (!CASTS.has(cast))
    throw invalid(`The cast "::${safe(cast)}" is not supported; use one of ${[...CASTS].join(', ')}.`);
  return cast;
}

/** `col->a->>b` into the column and its JSON path (select, filters and order share it). */
export function splitJsonPath(text: string): { name: string; path: JsonStep[] } {
  const steps = text.split(/(->>?)/);
  const name = ident(steps[0] ?? '', 'column name');
  const path: JsonStep[] = [];
  for (let i = 1; i < steps.length; i += 2) {
    const raw = steps[i + 1] ?? '';
    const key = /^[A-Za-z0-9_]{1,63}$/.test(raw) ? raw : nameOf(raw);
    if (key === null) throw invalid(`"${safe(raw)}" is not a valid JSON key in "${safe(text)}".`);
    if (steps[i] === '->>' && i + 2 < steps.length)
      throw invalid(`"->>" must be the last step of the JSON path "${safe(text)}".`);
    path.push({ key, text: steps[i] === '->>' });
  }
  return { name, path };
}

function parseColumn(alias: string | null, text: string): ColumnItem {
  let rest = text;
  let cast: string | null = null;
  const c = rest.indexOf('::');
  if (c >= 0) {
    cast = checkCast(rest.slice(c + 2).toLowerCase());
    rest = rest.slice(0, c);
  }
  const { name, path } = splitJsonPath(rest);
  return { type: 'column', name, alias, cast, path };
}

const AGGREGATE = new RegExp(`^(?:(.+)\\.)?(${AGGREGATES.join('|')})\\(\\)(?:::([A-Za-z0-9_]+))?$`);

/** `count()`, `col.sum()`, `col::int.avg()::text` (PostgREST's aggregate syntax), or null. */
function parseAggregate(alias: string | null, text: string): AggregateItem | null {
  const m = AGGREGATE.exec(text);
  if (!m) return null;
  const fn = m[2] as AggregateFn;
  if (!m[1] && fn !== 'count') throw invalid(`${fn}() needs a column, e.g. amount.${fn}().`);
  return {
    type: 'aggregate',
    fn,
    column: m[1] ? parseColumn(null, m[1]) : null,
    alias,
    cast: m[3] ? checkCast(m[3].toLowerCase()) : null,
  };
}

function parseItems(text: string, depth: number): SelectItem[] | null {
  if (depth > MAX_DEPTH) throw invalid(`Embedded relations may be nested at most ${MAX_DEPTH} deep.`);
  const trimmed = text.trim();
  if (trimmed === '' || trimmed === '*') return null;
  const parts = splitTop(trimmed);
  if (parts.length > MAX_ITEMS) throw invalid(`At most ${MAX_ITEMS} items are allowed in select.`);
  const items: SelectItem[] = [];
  for (const raw of parts) {
    const part = raw.trim();
    if (part === '*') {
      items.push({ type: 'star' });
      continue;
    }
    const { alias, rest } = takeAlias(part);
    const aggregate = parseAggregate(alias, rest);
    const spread = rest.startsWith('...');
    const body = spread ? rest.slice(3) : rest;
    const open = body.indexOf('(');
    if (aggregate) items.push(aggregate);
    else if (open >= 0) {
      if (!body.endsWith(')')) throw invalid(`"${safe(part)}" in select must end with ")".`);
      const embed = parseEmbed(alias, body.slice(0, open), body.slice(open + 1, -1), depth);
      if (spread) {
        if (alias) throw invalid(`A spread embed "${safe(part)}" takes no alias; alias its columns instead.`);
        embed.spread = true;
      }
      items.push(embed);
    } else if (spread)
      throw invalid(`"${safe(part)}": only an embedded relation can be spread, e.g. ...profiles(name).`);
    else items.push(parseColumn(alias, rest));
  }
  return items;
}

/** Parses `select=` into items; null means every column (`*` alone, or nothing). */
export function parseSelect(text: string): SelectItem[] | null {
  return parseItems(maskQuoted(text), 0);
}
