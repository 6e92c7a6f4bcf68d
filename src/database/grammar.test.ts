import { describe, expect, it } from 'vitest';
import { AppError } from '../errors/index.js';
import { parseSelect } from './grammar.js';
import { parseRecordsQuery } from './query.js';
import { resolveRelation, type ForeignKeyInfo } from './relations.js';

describe('select grammar', () => {
  it('parses columns, aliases, casts, JSON paths and nested embeds with hints and !inner', () => {
    expect(parseSelect('*')).toBeNull();
    expect(
      parseSelect('id,t:title,score::text,data->a->>b,author:profiles!author_id!inner(name,org:orgs(*)),comments(*)'),
    ).toEqual([
      { type: 'column', name: 'id', alias: null, cast: null, path: [] },
      { type: 'column', name: 'title', alias: 't', cast: null, path: [] },
      { type: 'column', name: 'score', alias: null, cast: 'text', path: [] },
      {
        type: 'column',
        name: 'data',
        alias: null,
        cast: null,
        path: [
          { key: 'a', text: false },
          { key: 'b', text: true },
        ],
      },
      {
        type: 'embed',
        alias: 'author',
        relation: 'profiles',
        hint: 'author_id',
        inner: true,
        node: {
          select: [
            { type: 'column', name: 'name', alias: null, cast: null, path: [] },
            {
              type: 'embed',
              alias: 'org',
              relation: 'orgs',
              hint: null,
              inner: false,
              node: { select: null, filters: [], order: [], limit: null, offset: null },
            },
          ],
          filters: [],
          order: [],
          limit: null,
          offset: null,
        },
      },
      {
        type: 'embed',
        alias: null,
        relation: 'comments',
        hint: null,
        inner: false,
        node: { select: null, filters: [], order: [], limit: null, offset: null },
      },
    ]);
  });

  it('reads quoted names with any characters in columns, aliases, casts, JSON paths, aggregates and embeds', () => {
    expect(parseSelect('"my col","a,b(c)":"x.y"::text,"d d"->>"k k","n n".sum(),"my tab"!"my fk"("z z")')).toEqual([
      { type: 'column', name: 'my col', alias: null, cast: null, path: [] },
      { type: 'column', name: 'x.y', alias: 'a,b(c)', cast: 'text', path: [] },
      { type: 'column', name: 'd d', alias: null, cast: null, path: [{ key: 'k k', text: true }] },
      {
        type: 'aggregate',
        fn: 'sum',
        column: { type: 'column', name: 'n n', alias: null, cast: null, path: [] },
        alias: null,
        cast: null,
      },
      {
        type: 'embed',
        alias: null,
        relation: 'my tab',
        hint: 'my fk',
        inner: false,
        node: {
          select: [{ type: 'column', name: 'z z', alias: null, cast: null, path: [] }],
          filters: [],
          order: [],
          limit: null,
          offset: null,
        },
      },
    ]);
  });

  it('refuses malformed selects with a 400', () => {
    for (const bad of [
      'a,(b',
      'a)',
      'x::regclass',
      'a b',
      'r(a',
      'p!x!y(a)',
      'd->>a->b',
      'a:b:c',
      '""',
      '"a',
      '"a\u0001b"',
      '"a""b"',
    ]) {
      expect(() => parseSelect(bad), bad).toThrow(AppError);
    }
    expect(() => parseSelect('a(b(c(d(e(f(g(h)))))))')).toThrow(/nested/);
  });

  it('routes embedded filters, order, limit and logic trees to their embed', () => {
    const q = parseRecordsQuery(
      'select=*,author:profiles(name,org:orgs(*))&author.name=eq.Ann&author.org.id=gt.1&author.order=name.desc&author.limit=2&author.or=(name.eq.a,name.eq.b)&order=author(name).asc,id',
    );
    const author = q.select![1] as any;
    expect(author.node.filters).toEqual([
      { type: 'cond', column: 'name', op: 'eq', negate: false, value: 'Ann' },
      {
        type: 'or',
        negate: false,
        items: [
          expect.objectContaining({ column: 'name', value: 'a' }),
          expect.objectContaining({ column: 'name', value: 'b' }),
        ],
      },
    ]);
    expect(author.node.order).toEqual([{ column: 'name', dir: 'desc', nulls: null }]);
    expect(author.node.limit).toBe(2);
    expect(author.node.select[1].node.filters).toEqual([
      { type: 'cond', column: 'id', op: 'gt', negate: false, value: '1' },
    ]);
    expect(q.order).toEqual([
      { column: 'name', dir: 'asc', nulls: null, relation: 'author' },
      { column: 'id', dir: 'asc', nulls: null },
    ]);
    expect(() => parseRecordsQuery('select=id&author.name=eq.x')).toThrow(/not an embedded relation/);
  });

  it('parses every operator form postgrest-js sends', () => {
    const q = parseRecordsQuery(
      'a=like(any).{x*,y*}&b=fts(english).cat&c=cs.{1,2}&d=not.ov.{a}&e=adj.[1,5)&f=isdistinct.3&or=(g.cs.{1,2},h.eq.1)&columns="a","b"',
    );
    expect(q.filters.slice(0, 3)).toEqual([
      { type: 'cond', column: 'a', op: 'like', negate: false, value: ['x*', 'y*'], quantifier: 'any' },
      { type: 'cond', column: 'b', op: 'fts', negate: false, value: 'cat', config: 'english' },
      { type: 'cond', column: 'c', op: 'cs', negate: false, value: '{1,2}' },
    ]);
    expect(q.filters[3]).toMatchObject({ op: 'ov', negate: true });
    expect(q.filters[6]).toMatchObject({
      type: 'or',
      items: [
        { column: 'g', value: '{1,2}' },
        { column: 'h', value: '1' },
      ],
    });
    expect(q.columns).toEqual(['a', 'b']);
    expect(() => parseRecordsQuery('a=like(some).{x}')).toThrow(AppError);
  });
});

describe('relations from foreign keys', () => {
  const fks: ForeignKeyInfo[] = [
    {
      name: 'posts_author_id_fkey',
      table: 'posts',
      columns: ['author_id'],
      refTable: 'profiles',
      refColumns: ['id'],
      unique: false,
    },
    {
      name: 'reviews_a_fkey',
      table: 'reviews',
      columns: ['a'],
      refTable: 'profiles',
      refColumns: ['id'],
      unique: false,
    },
    {
      name: 'reviews_b_fkey',
      table: 'reviews',
      columns: ['b'],
      refTable: 'profiles',
      refColumns: ['id'],
      unique: false,
    },
  ];
  it('finds many-to-one and one-to-many, by table, key column, constraint or hint', () => {
    expect(resolveRelation(fks, 'posts', 'profiles', null)).toMatchObject({
      kind: 'many-to-one',
      parentColumns: ['author_id'],
      childColumns: ['id'],
    });
    expect(resolveRelation(fks, 'posts', 'author_id', null)).toMatchObject({ kind: 'many-to-one', table: 'profiles' });
    expect(resolveRelation(fks, 'profiles', 'posts', null)).toMatchObject({
      kind: 'one-to-many',
      parentColumns: ['id'],
      childColumns: ['author_id'],
    });
    expect(resolveRelation(fks, 'profiles', 'reviews', 'b')).toMatchObject({ constraint: 'reviews_b_fkey' });
    expect(resolveRelation(fks, 'profiles', 'reviews', 'reviews_a_fkey')).toMatchObject({
      constraint: 'reviews_a_fkey',
    });
    const oneToOne = [
      {
        name: 'settings_pid_fkey',
        table: 'settings',
        columns: ['pid'],
        refTable: 'profiles',
        refColumns: ['id'],
        unique: true,
      },
    ];
    expect(resolveRelation(oneToOne, 'profiles', 'settings', null)).toMatchObject({ kind: 'one-to-one' });
  });
  it('tells the two directions of a self reference apart as PostgREST: the table name is the children, the key column the parent', () => {
    const self = [
      { name: 'emp_boss_fkey', table: 'emp', columns: ['boss'], refTable: 'emp', refColumns: ['id'], unique: false },
    ];
    expect(resolveRelation(self, 'emp', 'emp', null)).toMatchObject({ kind: 'one-to-many', childColumns: ['boss'] });
    expect(resolveRelation(self, 'emp', 'boss', null)).toMatchObject({
      kind: 'many-to-one',
      parentColumns: ['boss'],
      table: 'emp',
    });
    expect(resolveRelation(self, 'emp', 'emp', 'boss')).toMatchObject({ kind: 'one-to-many', childColumns: ['boss'] });
    expect(resolveRelation(self, 'emp', 'emp', 'emp_boss_fkey')).toMatchObject({
      kind: 'one-to-many',
      childColumns: ['boss'],
    });
    expect(() => resolveRelation(self, 'emp', 'emp', 'id')).toThrow(
      expect.objectContaining({ code: 'RELATION_NOT_FOUND' }),
    );
  });

  it('answers none with PGRST200 and several with a 300 listing the hints', () => {
    expect(() => resolveRelation(fks, 'posts', 'reviews', null)).toThrow(
      expect.objectContaining({ code: 'RELATION_NOT_FOUND' }),
    );
    try {
      resolveRelation(fks, 'profiles', 'reviews', null);
      expect.unreachable();
    } catch (e) {
      expect(e).toMatchObject({ code: 'AMBIGUOUS_RELATION', status: 300 });
      expect((e as AppError).hint).toContain('reviews!reviews_a_fkey');
    }
  });
});
