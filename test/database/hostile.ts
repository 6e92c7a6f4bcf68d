// Seeded generators of random and hostile query strings, identifiers and bodies for the fuzz tests.

/** A small seeded PRNG (mulberry32) so a failing case can be replayed. */
export function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  return { next, int, pick };
}
export type Rng = ReturnType<typeof rng>;

/** Every value here is a marker: if it ever shows up in SQL text or an error body, something leaked. */
export const HOSTILE = [
  "'",
  '"',
  ';',
  '--',
  '/*',
  '*/',
  "'; drop table canary; --",
  '"; drop table canary; --',
  "1' or '1'='1",
  '1 or 1=1',
  ') or (1=1',
  '$1',
  '$$',
  '\\',
  '\\x00',
  '\u0000',
  '%00',
  '%',
  '%ZZ',
  '%C0%AF',
  '(',
  ')',
  ',',
  '.',
  '..',
  '*',
  ' ',
  '',
  'null',
  'NULL',
  'true',
  '1e999',
  '-0',
  '9'.repeat(40),
  '-1',
  '1.5',
  '00000000-0000-0000-0000-000000000000',
  'not-a-uuid',
  '2024-13-45T99:99:99Z',
  '2024-01-01',
  '{"a":1}',
  '[1,2',
  '💥',
  'é',
  '\u202e',
  'ﬃ',
  'e\u0301',
  '\ud800',
  'pg_sleep(10)',
  'current_user',
  'pg_catalog.pg_user',
  'a'.repeat(300),
];
export const OPS = [
  'eq',
  'neq',
  'gt',
  'gte',
  'lt',
  'lte',
  'like',
  'ilike',
  'in',
  'is',
  'not.eq',
  'not.in',
  'not.is',
  'fts',
  'eq ',
  'EQ',
  '',
];

function value(r: Rng): string {
  const k = r.int(6);
  if (k === 0) return String(r.int(100));
  if (k === 1) return r.pick(HOSTILE) + r.pick(HOSTILE);
  if (k === 2) return Array.from({ length: r.int(8) }, () => String.fromCharCode(r.int(0x3000))).join('');
  return r.pick(HOSTILE);
}

function list(r: Rng, _columns: readonly string[]): string {
  const n = r.next() < 0.05 ? 1000 + r.int(1500) : r.int(6);
  return `(${Array.from({ length: n }, () => (r.next() < 0.3 ? `"${value(r)}"` : value(r))).join(',')})`;
}

function treeItem(r: Rng, columns: readonly string[], depth: number): string {
  if (depth < 8 && r.next() < 0.25)
    return `${r.next() < 0.3 ? 'not.' : ''}${r.pick(['or', 'and', 'xor'])}(${tree(r, columns, depth + 1)})`;
  const op = r.pick(OPS);
  return `${jsonPathOr(r, columns)}.${op}.${op.endsWith('in') ? list(r, columns) : value(r)}`;
}

function tree(r: Rng, columns: readonly string[], depth: number): string {
  return Array.from({ length: 1 + r.int(4) }, () => treeItem(r, columns, depth)).join(r.next() < 0.9 ? ',' : ';');
}

export function column(r: Rng, columns: readonly string[]): string {
  const name =
    r.next() < 0.7
      ? r.pick(columns)
      : r.pick([...HOSTILE, 'id', 'ID', 'Id"', 'pg_class', 'ctid', 'xmin', 'oid', '__plinth_total']);
  // PostgREST's quoted names: `"my col"`, sometimes around hostile text or left open.
  return r.next() < 0.15 ? `"${name}${r.next() < 0.9 ? '"' : ''}` : name;
}

/** A column, or often a JSON path on one (`col->a->>b`, keys sometimes hostile). */
function jsonPathOr(r: Rng, columns: readonly string[]): string {
  if (r.next() < 0.6) return column(r, columns);
  const steps = Array.from(
    { length: 1 + r.int(3) },
    () => `${r.pick(['->', '->>'])}${r.next() < 0.7 ? r.pick(['a', 'b', '0', '12']) : value(r)}`,
  );
  return `${column(r, columns)}${steps.join('')}`;
}

/** A select item of PostgREST 12: a column, JSON path, cast, aggregate, spread or embed. */
function selectItem(r: Rng, columns: readonly string[]): string {
  const col = () => column(r, columns);
  switch (r.int(8)) {
    case 0:
      return 'count()';
    case 1:
      return `${col()}.${r.pick(['sum', 'avg', 'min', 'max', 'count', 'nope', value(r)])}()${r.next() < 0.3 ? '::int' : ''}`;
    case 2:
      return `${r.pick(['a', 'x1', value(r)])}:${col()}::text.max()`;
    case 3:
      return `...${col()}(${col()})`;
    case 4:
      return jsonPathOr(r, columns);
    case 5:
      return `${col()}(count)`;
    default:
      return col();
  }
}

function enc(r: Rng, s: string): string {
  // Mostly proper encoding; sometimes raw characters and broken escapes go out as they are.
  const wellFormed = s.replace(/[\ud800-\udfff]/g, '\ufffd');
  return r.next() < 0.85 ? encodeURIComponent(wellFormed) : wellFormed.replace(/[#&\s]/g, (c) => encodeURIComponent(c));
}

/** A random query string (without ?), often close to valid, often hostile. */
export function queryString(r: Rng, columns: readonly string[]): string {
  const parts: string[] = [];
  const n = r.next() < 0.02 ? 100 : r.int(5);
  for (let i = 0; i < n; i++) {
    const k = r.int(10);
    if (k === 0)
      parts.push(`select=${enc(r, Array.from({ length: 1 + r.int(3) }, () => selectItem(r, columns)).join(','))}`);
    else if (k === 1)
      parts.push(
        `order=${enc(r, `${jsonPathOr(r, columns)}.${r.pick(['asc', 'desc', 'desc.nullsfirst', 'nullslast', value(r)])}`)}`,
      );
    else if (k === 2)
      parts.push(`${r.pick(['limit', 'offset'])}=${enc(r, r.next() < 0.5 ? String(r.int(2000) - 10) : value(r))}`);
    else if (k === 3) parts.push(`${r.pick(['or', 'and', 'not.or', 'not.and'])}=${enc(r, `(${tree(r, columns, 0)})`)}`);
    else if (k === 4)
      parts.push(
        `${enc(r, jsonPathOr(r, columns))}=${enc(r, r.next() < 0.5 ? `${r.pick(OPS)}.${value(r)}` : value(r))}`,
      );
    else {
      const op = r.pick(OPS);
      parts.push(`${enc(r, column(r, columns))}=${enc(r, `${op}.${op.endsWith('in') ? list(r, columns) : value(r)}`)}`);
    }
  }
  return parts.join('&');
}

/** A random JSON body for writes: objects with hostile keys and values of every JSON type. */
export function body(r: Rng, columns: readonly string[]): unknown {
  const obj = () => {
    const o: Record<string, unknown> = {};
    for (let i = r.int(4); i >= 0; i--) {
      const v = r.int(7);
      o[column(r, columns)] =
        v === 0
          ? value(r)
          : v === 1
            ? r.int(1e6) - 5e5
            : v === 2
              ? r.next() < 0.5
              : v === 3
                ? null
                : v === 4
                  ? { nested: value(r) }
                  : v === 5
                    ? [value(r)]
                    : r.next() * 1e300;
    }
    return o;
  };
  const k = r.int(8);
  if (k === 0) return value(r);
  if (k === 1) return Array.from({ length: r.int(3) }, obj);
  if (k === 2) return 42;
  return obj();
}
