// Pure fuzz of the parser and SQL builder: any input either builds a statement whose text
// holds no client value, or fails with a 4xx AppError. Nothing else.
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors/index.js';
import { parseRecordsQuery } from '../../src/database/query.js';
import { buildDelete, buildInsert, buildSelect, buildUpdate } from '../../src/database/build.js';
import type { ColumnMeta, TableMeta } from '../../src/database/schema.js';
import { valueKind } from '../../src/database/types.js';
import { body, queryString, rng } from './hostile.js';

const specs: Array<[string, string, string]> = [
  ['id', 'uuid', 'uuid'],
  ['name', 'text', 'text'],
  ['age', 'int4', 'integer'],
  ['big', 'int8', 'bigint'],
  ['score', 'float8', 'double precision'],
  ['ok', 'bool', 'boolean'],
  ['at', 'timestamptz', 'timestamp with time zone'],
  ['day', 'date', 'date'],
  ['meta', 'jsonb', 'jsonb'],
  ['my col', 'text', 'text'],
  ['a.b(c),d', 'jsonb', 'jsonb'],
];
const columnList: ColumnMeta[] = specs.map(([name, typname, castType]) => ({
  name,
  typname,
  castType,
  kind: valueKind(typname),
  type: typname,
  nullable: true,
  default: null,
  isPrimaryKey: name === 'id',
  unique: false,
  foreignKey: null,
}));
const table: TableMeta = {
  name: 't',
  isTable: true,
  rlsEnabled: false,
  columns: new Map(columnList.map((c) => [c.name, c])),
  columnList,
  primaryKey: ['id'],
};
const names = columnList.map((c) => c.name);
// The only words SQL text may contain: the builder's own keywords, the table's quoted names and placeholders.
const ALLOWED =
  /^(?:with|page|as|select|count|sum|avg|min|max|group|g|->>?|over|from|public|where|and|or|not|is|null|true|false|unknown|in|like|ilike|order|by|asc|desc|nulls|first|last|limit|offset|coalesce|json_agg|r|text|body|total|1|insert|into|values|default|on|conflict|do|update|set|excluded|nothing|returning|w|delete|t\d+|et\d+|x|row_number|row_to_json|json|lateral|left|join|exists|any|all|array|distinct|to_tsvector|to_tsquery|plainto_tsquery|phraseto_tsquery|websearch_to_tsquery|regconfig|int|@@|@>|<@|&&|<<|>>|&<|&>|-\|-|~\*?|integer|bigint|double|precision|boolean|timestamp|time|zone|date|jsonb|uuid|"[a-z_]+"|\$\d+|[()*,.=<>:'[\]]+|<>|>=|<=|::)$/;

function check(stmt: { text: string; values: unknown[] }) {
  // Quoted names are checked below; as tokens they stand for one word.
  const tokens = stmt.text
    .replace(/"[^"]*"/g, '"x"')
    .split(/(\s+|[().,]|::|->>?)/)
    .filter((s) => s.trim() !== '');
  for (const tok of tokens) {
    if (!ALLOWED.test(tok) && !/^[()*,.=<>:'[\]]+$/.test(tok))
      throw new Error(`unexpected token ${JSON.stringify(tok)} in ${stmt.text}`);
  }
  for (const m of stmt.text.matchAll(/"([^"]*)"/g)) {
    // Quoted: the table's names, aggregate output names and the generator's valid aliases.
    expect([...names, 't', 'count', 'sum', 'avg', 'min', 'max', 'a', 'x1', 'b']).toContain(m[1]);
  }
}

describe('parser and builder fuzz', () => {
  it('never throws anything but a 4xx AppError and never puts client text in SQL', () => {
    const r = rng(7130);
    let built = 0;
    for (let i = 0; i < 6000; i++) {
      const qs = queryString(r, names);
      const kind = i % 4;
      try {
        const q = parseRecordsQuery(qs);
        const b = body(r, names);
        const stmt =
          kind === 0
            ? buildSelect(table, q)
            : kind === 1
              ? buildInsert(
                  table,
                  Array.isArray(b) ? (b as Record<string, unknown>[]) : [b as Record<string, unknown>],
                  { representation: true, select: q.select, upsert: null },
                )
              : kind === 2
                ? buildUpdate(table, q, (b ?? {}) as Record<string, unknown>, true)
                : buildDelete(table, q, false);
        check(stmt);
        built++;
      } catch (e) {
        if (!(e instanceof AppError)) throw new Error(`non-AppError for ${JSON.stringify(qs)}: ${String(e)}`);
        expect(e.status, qs).toBeGreaterThanOrEqual(400);
        expect(e.status, qs).toBeLessThan(500);
      }
    }
    // The generator must also produce valid statements, or the test proves nothing.
    expect(built).toBeGreaterThan(300);
  });
});
