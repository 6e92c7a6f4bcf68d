import { describe, expect, it } from 'vitest';
import { AppError } from '../errors/index.js';
import { buildSelect } from './build.js';
import { newContext } from './compile.js';
import type { Params } from './filters.js';
import { parseRecordsQuery, type RecordsQuery } from './query.js';
import { ReadCache, readStatement, shapeOf } from './read-cache.js';
import { table } from '../../test/helpers/people-table.js';

const tables = new Map([['people', table]]);

const compileWith = (count?: 'exact' | 'none' | 'planned') => async (q: RecordsQuery, p?: Params) =>
  buildSelect(table, q, 100, newContext(tables, [], p), 'json', count);
const fresh = (raw: string, count?: 'exact' | 'none' | 'planned') =>
  buildSelect(table, parseRecordsQuery(raw), 100, newContext(tables, [], undefined), 'json', count);

describe('compiled reads by shape', () => {
  it('keys a query string on its shape: slot values vary, everything else is part of the key', () => {
    const a = shapeOf('age=gte.18&name=like.a*&limit=20&select=id,name&order=age.desc');
    const b = shapeOf('age=gte.70&name=like.zz*&limit=5&select=id,name&order=age.desc');
    expect(a?.key).toBe(b?.key);
    expect(a?.slots.map((s) => s.value)).toEqual(['18', 'a*', 20]);
    expect(shapeOf('age=gte.18&select=id')?.key).not.toBe(shapeOf('age=gte.18&select=name')?.key);
    expect(shapeOf('age=gte.18')?.key).not.toBe(shapeOf('age=gt.18')?.key);
    expect(shapeOf('age=gte.18')?.key).not.toBe(shapeOf('age=not.gte.18')?.key);
    // Values the compiler writes into the SQL (is, in lists) stay in the key.
    expect(shapeOf('ok=is.true')?.key).not.toBe(shapeOf('ok=is.false')?.key);
    expect(shapeOf('age=in.(1,2)')?.key).not.toBe(shapeOf('age=in.(1,2,3)')?.key);
    // What the parser refuses is left to it.
    expect(shapeOf('limit=0')).toBeNull();
    expect(shapeOf('limit=1&limit=2')).toBeNull();
    expect(shapeOf('name=eq.%E0%A4%A')).toBeNull();
  });

  const cases = [
    ['age=gte.18&limit=20', 'age=gte.61&limit=3'],
    ['name=like.a*b&order=age.desc,name&offset=5', 'name=like.*x*&order=age.desc,name&offset=0'],
    ['id=eq.0a6c1c1e-6b8e-4a55-9c1e-6b8e4a559c1e', 'id=eq.11111111-2222-3333-4444-555555555555'],
    [
      'age=not.eq.3&ok=is.true&or=(age.lt.5,age.gt.90)&select=id,meta->a',
      'age=not.eq.9&ok=is.true&or=(age.lt.5,age.gt.90)&select=id,meta->a',
    ],
    ['meta=eq.{"a":1}&name=imatch.^x', 'meta=eq.[1,2]&name=imatch.y$'],
  ];
  for (const count of ['exact', 'none', 'planned'] as const) {
    it(`binds a cached shape exactly as a fresh compile does (count ${count})`, async () => {
      const cache = new ReadCache();
      for (const [first, second] of cases) {
        const miss = await readStatement(cache, { version: 'v1' }, 'people', first!, { count }, compileWith(count));
        expect(miss.read).toEqual(fresh(first!, count));
        const hit = await readStatement(cache, { version: 'v1' }, 'people', second!, { count }, async () => {
          throw new Error('compiled again');
        });
        expect(hit.read).toEqual(fresh(second!, count));
        expect(hit.prepared.text).toBe(hit.read.text);
        const q = parseRecordsQuery(second!);
        expect([hit.offset, hit.limit]).toEqual([q.offset ?? 0, q.limit ?? 100]);
      }
    });
  }

  it('checks a slot value against its column on every hit (the same 400 as a compile)', async () => {
    const cache = new ReadCache();
    await readStatement(cache, { version: 'v1' }, 'people', 'age=eq.1', {}, compileWith());
    const err = await readStatement(cache, { version: 'v1' }, 'people', 'age=eq.x', {}, compileWith()).catch((e) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).message).toBe(
      (() => {
        try {
          fresh('age=eq.x');
        } catch (e) {
          return (e as Error).message;
        }
      })(),
    );
  });

  it('compiles again once the schema version changed, and for a Range header', async () => {
    const cache = new ReadCache();
    let compiles = 0;
    const counting = async (q: RecordsQuery, p?: Params) => {
      compiles++;
      return compileWith()(q, p);
    };
    await readStatement(cache, { version: 'v1' }, 'people', 'age=eq.1', {}, counting);
    expect(compiles).toBe(2); // the request's own, then the shape with marks
    await readStatement(cache, { version: 'v1' }, 'people', 'age=eq.2', {}, counting);
    expect(compiles).toBe(2);
    await readStatement(cache, { version: 'v2' }, 'people', 'age=eq.3', {}, counting);
    expect(compiles).toBe(4);
    await readStatement(cache, { version: 'v2' }, 'people', 'age=eq.3', { range: { offset: 0, limit: 5 } }, counting);
    expect(compiles).toBe(5);
  });

  it('keeps the shape from the first read after DDL, whose own compile loads the schema', async () => {
    const cache = new ReadCache();
    const schema = { version: 'g1:0' }; // invalidated: the next compile loads it
    const loading = async (q: RecordsQuery, p?: Params) => {
      schema.version = 'g1:123'; // what SchemaCache.version reads once the load is in
      return compileWith()(q, p);
    };
    await readStatement(cache, schema, 'people', 'age=eq.1', {}, loading);
    const fail = async () => {
      throw new Error('compiled again');
    };
    await expect(readStatement(cache, schema, 'people', 'age=eq.2', {}, fail)).resolves.toBeTruthy();
    // A schema change during the marked compile: not kept.
    let n = 0;
    const changing = async (q: RecordsQuery, p?: Params) => {
      if (++n === 2) schema.version = 'g2:0';
      return compileWith()(q, p);
    };
    await readStatement(cache, schema, 'people', 'name=eq.1', {}, changing);
    await expect(readStatement(cache, schema, 'people', 'name=eq.2', {}, fail)).rejects.toThrow('compiled again');
  });

  it('keeps at most its bound of shapes, the least recently used going first', async () => {
    const cache = new ReadCache(2);
    const v = { version: 'v1' };
    await readStatement(cache, v, 'people', 'age=eq.1', {}, compileWith());
    await readStatement(cache, v, 'people', 'name=eq.1', {}, compileWith());
    await readStatement(cache, v, 'people', 'age=eq.2', {}, compileWith()); // a hit: age is now the most recent
    await readStatement(cache, v, 'people', 'ok=eq.true', {}, compileWith());
    expect(cache.size).toBe(2);
    const fail = async () => {
      throw new Error('compiled again');
    };
    await expect(readStatement(cache, v, 'people', 'age=eq.3', {}, fail)).resolves.toBeTruthy();
    await expect(readStatement(cache, v, 'people', 'name=eq.3', {}, fail)).rejects.toThrow('compiled again');
  });
});
