import { describe, expect, it } from 'vitest';
import { AppError } from '../errors/index.js';
import { LIMITS, parseRecordsQuery, splitQuery } from './query.js';

const err = (fn: () => unknown): AppError => {
  try {
    fn();
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  throw new Error('expected an AppError');
};

describe('records query parser', () => {
  it('parses select, order, limit, offset and filters in order', () => {
    const q = parseRecordsQuery('select=a,b&order=a.desc.nullslast,b&limit=5&offset=10&a=eq.1&b=not.like.x*&a=gte.0');
    expect(q.select).toEqual([
      { type: 'column', name: 'a', alias: null, cast: null, path: [] },
      { type: 'column', name: 'b', alias: null, cast: null, path: [] },
    ]);
    expect(q.order).toEqual([
      { column: 'a', dir: 'desc', nulls: 'last' },
      { column: 'b', dir: 'asc', nulls: null },
    ]);
    expect(q.limit).toBe(5);
    expect(q.offset).toBe(10);
    expect(q.filters).toEqual([
      { type: 'cond', column: 'a', op: 'eq', negate: false, value: '1' },
      { type: 'cond', column: 'b', op: 'like', negate: true, value: 'x*' },
      { type: 'cond', column: 'a', op: 'gte', negate: false, value: '0' },
    ]);
  });

  it('reads quoted names in filters, order, columns, embedded filters and logic trees', () => {
    const q = parseRecordsQuery(
      encodeURI(
        'select=*,"my tab"(*)&"my col"=eq.1&"my tab"."a.b"=gt.2&order="my col".desc,"my tab"("x y")&columns="c,d","e"&or=("my col".eq.3,"j s"->>"k k".eq.4)',
      ),
    );
    expect(q.filters[0]).toEqual({ type: 'cond', column: 'my col', op: 'eq', negate: false, value: '1' });
    expect(q.order).toEqual([
      { column: 'my col', dir: 'desc', nulls: null },
      { column: 'x y', relation: 'my tab', dir: 'asc', nulls: null },
    ]);
    expect(q.columns).toEqual(['c,d', 'e']);
    expect(q.filters[1]).toMatchObject({
      type: 'or',
      items: [
        { column: 'my col', value: '3' },
        { column: 'j s', path: [{ key: 'k k', text: true }], value: '4' },
      ],
    });
    const embed = q.select!.find((i) => i.type === 'embed');
    expect(embed).toMatchObject({ relation: 'my tab', node: { filters: [{ column: 'a.b', op: 'gt', value: '2' }] } });
  });

  it('reads JSON paths inside logic trees', () => {
    const q = parseRecordsQuery('or=(data->>a.eq.1,and(data->b->>0.gt.2,not.and(x.is.null)))');
    expect(q.filters[0]).toMatchObject({
      type: 'or',
      items: [
        { column: 'data', path: [{ key: 'a', text: true }], op: 'eq', value: '1' },
        {
          type: 'and',
          items: [
            {
              column: 'data',
              path: [
                { key: 'b', text: false },
                { key: '0', text: true },
              ],
              op: 'gt',
              value: '2',
            },
            { type: 'and', negate: true },
          ],
        },
      ],
    });
  });

  it('keeps the whole value of a top-level filter, dots and commas included', () => {
    const q = parseRecordsQuery('name=eq.a.b,c(d)&email=ilike.*%40example.com');
    expect(q.filters[0]).toMatchObject({ value: 'a.b,c(d)' });
    expect(q.filters[1]).toMatchObject({ op: 'ilike', value: '*@example.com' });
  });

  it('parses in lists with quoted values and is', () => {
    const q = parseRecordsQuery('a=in.(1,"2,3","x\\"y",)&b=is.NULL&c=not.is.true');
    expect(q.filters[0]).toMatchObject({ op: 'in', value: ['1', '2,3', 'x"y', ''] });
    expect(q.filters[1]).toMatchObject({ op: 'is', value: 'null' });
    expect(q.filters[2]).toMatchObject({ op: 'is', value: 'true', negate: true });
  });

  it('parses logic trees with nesting and negation', () => {
    const q = parseRecordsQuery('or=(a.eq.1,and(b.gt.2,c.not.in.(3,4)),not.or(d.is.null,e.eq."x,y"))');
    expect(q.filters).toEqual([
      {
        type: 'or',
        negate: false,
        items: [
          { type: 'cond', column: 'a', op: 'eq', negate: false, value: '1' },
          {
            type: 'and',
            negate: false,
            items: [
              { type: 'cond', column: 'b', op: 'gt', negate: false, value: '2' },
              { type: 'cond', column: 'c', op: 'in', negate: true, value: ['3', '4'] },
            ],
          },
          {
            type: 'or',
            negate: true,
            items: [
              { type: 'cond', column: 'd', op: 'is', negate: false, value: 'null' },
              { type: 'cond', column: 'e', op: 'eq', negate: false, value: 'x,y' },
            ],
          },
        ],
      },
    ]);
    expect(parseRecordsQuery('not.and=(a.eq.1,b.eq.2)').filters[0]).toMatchObject({ type: 'and', negate: true });
  });

  it('decodes percent-encoding and + as space', () => {
    expect(parseRecordsQuery('name=eq.a+b%20c%2Cd').filters[0]).toMatchObject({ value: 'a b c,d' });
  });

  it.each([
    ['limit=0', /limit/],
    ['limit=1001', /limit/],
    ['limit=-1', /limit/],
    ['limit=1&limit=2', /once/],
    ['offset=x', /offset/],
    ['a=eq', /<operator>.<value>/],
    ['a=xx.1', /Unknown operator/],
    ['a=1', /Unknown operator/],
    ['a=in.1,2', /Expected "\("/],
    ['a=in.(1,2', /Expected/],
    ['a=in.(1,2)x', /Unexpected/],
    ['a=is.maybe', /is/],
    ['a;drop=eq.1', /not a valid column/],
    ['""=eq.1', /not a valid column/],
    ['or=("a\\"b".eq.1)', /not a valid name/],
    ['or=(a->>b->c.eq.1)', /last step/],
    ['or=(a->.eq.1)', /needs a key/],
    ['select=a,b c', /not a valid column/],
    ['order=a.sideways', /Order/],
    ['order=', /not a valid column/],
    ['or=(a.eq.1', /Expected/],
    ['or=a.eq.1', /Expected "\("/],
    ['or=()', /not a valid column/],
    ['or=(a.eq."unterminated)', /Unterminated/],
    ['or=(a.eq.1)junk', /Unexpected/],
    ['a=eq.%ZZ', /percent/],
  ])('rejects %s', (raw, message) => {
    const e = err(() => parseRecordsQuery(raw));
    expect(e.status).toBe(400);
    expect(e.message).toMatch(message);
  });

  it('enforces its bounds', () => {
    expect(err(() => splitQuery('a'.repeat(LIMITS.queryLength + 1))).message).toMatch(/longer/);
    expect(
      err(() => parseRecordsQuery(Array.from({ length: LIMITS.params + 1 }, (_, i) => `c${i}=eq.1`).join('&'))).message,
    ).toMatch(/query parameters/);
    const list = Array.from({ length: LIMITS.listItems + 1 }, (_, i) => i).join(',');
    expect(err(() => parseRecordsQuery(`a=in.(${list})`)).message).toMatch(/at most/);
    const deep = `or=(${'or('.repeat(LIMITS.depth + 1)}a.eq.1${')'.repeat(LIMITS.depth + 1)})`;
    expect(err(() => parseRecordsQuery(deep)).message).toMatch(/nested/);
    const many = `or=(${Array.from({ length: LIMITS.nodes + 1 }, () => 'a.eq.1').join(',')})`;
    expect(err(() => parseRecordsQuery(many)).message).toMatch(/conditions/);
  });
});
