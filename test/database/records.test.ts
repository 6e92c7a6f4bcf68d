import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { call } from '../helpers/http.js';
import { admin, envelope, sql } from './helpers.js';

describe.each(backends())('records API (%s)', (backend) => {
  let t: TestApp;
  const h = () => admin(t);

  beforeAll(async () => {
    t = await startApp(backend);
    const r = await call(t, 'POST', '/api/database/tables', {
      headers: h(),
      body: {
        tableName: 'items',
        columns: [
          { name: 'name', type: 'string', nullable: false },
          { name: 'qty', type: 'integer', nullable: true },
          { name: 'price', type: 'float', nullable: true },
          { name: 'done', type: 'boolean', nullable: true, defaultValue: 'false' },
          { name: 'ref', type: 'uuid', nullable: true },
          { name: 'due', type: 'datetime', nullable: true },
          { name: 'meta', type: 'json', nullable: true },
          { name: 'code', type: 'string', nullable: true, unique: true },
        ],
      },
    });
    expect(r.status).toBe(201);
    const rows = Array.from({ length: 30 }, (_, i) => ({
      name: `item ${String(i).padStart(2, '0')}`,
      qty: i,
      price: i / 2,
      done: i % 2 === 0,
      due: i < 5 ? null : new Date(Date.UTC(2024, 0, i)).toISOString(),
      meta: { i, tags: ['a', i] },
    }));
    const ins = await call(t, 'POST', '/api/database/records/items', { headers: h(), body: rows });
    expect(ins.status).toBe(201);
    expect(ins.body).toEqual([]);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('reads with default limit, headers and wire types', async () => {
    const r = await call(t, 'GET', '/api/database/records/items?order=qty.asc', { headers: h() });
    expect(r.status).toBe(200);
    expect(r.body).toHaveLength(30);
    expect(r.headers.get('x-total-count')).toBe('30');
    expect(r.headers.get('content-range')).toBe('0-29/30');
    const row = r.body[7];
    expect(row.qty).toBe(7);
    expect(row.price).toBe(3.5);
    expect(row.done).toBe(false);
    expect(row.meta).toEqual({ i: 7, tags: ['a', 7] });
    expect(typeof row.id).toBe('string');
    expect(new Date(row.due).toISOString()).toBe(new Date(Date.UTC(2024, 0, 7)).toISOString());
    expect(row.due).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(row.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
  });

  it('filters with every operator', async () => {
    const cases: Array<[string, number[]]> = [
      ['qty=eq.3', [3]],
      ['qty=neq.3&qty=lt.5', [0, 1, 2, 4]],
      ['qty=gt.27', [28, 29]],
      ['qty=gte.28', [28, 29]],
      ['qty=lt.2', [0, 1]],
      ['qty=lte.1', [0, 1]],
      ['name=like.item 1*', [10, 11, 12, 13, 14, 15, 16, 17, 18, 19]],
      ['name=ilike.ITEM 2%25', [20, 21, 22, 23, 24, 25, 26, 27, 28, 29]],
      ['qty=in.(1,3,5)', [1, 3, 5]],
      ['due=is.null', [0, 1, 2, 3, 4]],
      ['done=is.true&qty=lt.5', [0, 2, 4]],
      ['qty=not.gte.2', [0, 1]],
      ['qty=not.in.(0,1,2)&qty=lt.5', [3, 4]],
      ['or=(qty.eq.1,qty.eq.29)', [1, 29]],
      ['or=(qty.lt.2,and(qty.gt.10,qty.lt.13))', [0, 1, 11, 12]],
      ['not.or=(qty.gt.1,done.is.true)', [1]],
      ['or=(name.eq."item 03",qty.in.(4,5))', [3, 4, 5]],
      ['or=(qty.not.gt.0,qty.eq.9)', [0, 9]],
      ['price=gt.14', [29]],
      ['due=gte.2024-01-28T00:00:00Z', [28, 29]],
      ['meta=eq.{"i":3,"tags":["a",3]}', [3]],
      ['qty=in.()', []],
    ];
    for (const [q, expected] of cases) {
      const r = await call(t, 'GET', `/api/database/records/items?${q}&order=qty.asc&select=qty`, { headers: h() });
      expect(r.status, q).toBe(200);
      expect(
        r.body.map((x: { qty: number }) => x.qty),
        q,
      ).toEqual(expected);
      expect(r.headers.get('x-total-count'), q).toBe(String(expected.length));
    }
  });

  it('orders by several keys with nulls placement, paginates, selects', async () => {
    let r = await call(
      t,
      'GET',
      '/api/database/records/items?order=due.desc.nullslast,qty.desc&limit=3&offset=25&select=qty,due',
      { headers: h() },
    );
    expect(r.status).toBe(200);
    expect(r.body.map((x: any) => x.qty)).toEqual([4, 3, 2]);
    expect(Object.keys(r.body[0])).toEqual(['qty', 'due']);
    expect(r.headers.get('content-range')).toBe('25-27/30');
    r = await call(t, 'GET', '/api/database/records/items?order=due.asc.nullsfirst,qty&limit=2', { headers: h() });
    expect(r.body.map((x: any) => x.qty)).toEqual([0, 1]);
    r = await call(t, 'GET', '/api/database/records/items?offset=100', { headers: h() });
    expect(r.body).toEqual([]);
    expect(r.headers.get('x-total-count')).toBe('30');
    expect(r.headers.get('content-range')).toBe('*/30');
  });

  it('rejects bad queries with 400 naming the problem', async () => {
    const cases: Array<[string, string, string]> = [
      ['limit=0', 'INVALID_QUERY', 'limit'],
      ['limit=1001', 'INVALID_QUERY', 'limit'],
      ['limit=abc', 'INVALID_QUERY', 'limit'],
      ['nope=eq.1', 'UNKNOWN_COLUMN', 'nope'],
      ['select=qty,nope', 'UNKNOWN_COLUMN', 'nope'],
      ['order=nope.asc', 'UNKNOWN_COLUMN', 'nope'],
      ['qty=eq.abc', 'INVALID_VALUE', 'qty'],
      ['qty=eq.', 'INVALID_VALUE', 'qty'],
      ['ref=eq.', 'INVALID_VALUE', 'ref'],
      ['ref=eq.not-a-uuid', 'INVALID_VALUE', 'ref'],
      ['due=eq.yesterday', 'INVALID_VALUE', 'due'],
      ['done=eq.maybe', 'INVALID_VALUE', 'done'],
      ['qty=eq.99999999999', 'INVALID_VALUE', 'qty'],
      ['qty=foo.1', 'INVALID_QUERY', 'foo'],
      ['qty=is.banana', 'INVALID_QUERY', 'is'],
      ['qty=is.true', 'INVALID_VALUE', 'qty'],
      ['or=(qty.eq.1', 'INVALID_QUERY', ''],
      ['meta=eq.{bad', 'INVALID_VALUE', 'meta'],
    ];
    for (const [q, code, mention] of cases) {
      const r = await call(t, 'GET', `/api/database/records/items?${q}`, { headers: h() });
      expect(r.status, q).toBe(400);
      expect(envelope(r).error, q).toBe(code);
      expect(r.body.message, q).toContain(mention);
    }
  });

  it('unknown table is 404 on every method of both paths', async () => {
    for (const [m, p] of [
      ['GET', '/api/database/records/nosuch'],
      ['GET', '/api/db/nosuch'],
      ['GET', '/api/db/pg_user'],
      ['DELETE', '/api/db/nosuch?id=eq.1'],
      ['GET', '/api/database/records/pg_catalog.pg_user'],
    ] as const) {
      const r = await call(t, m, p, { headers: h() });
      expect(r.status, p).toBe(404);
      expect(envelope(r).error).toBe('TABLE_NOT_FOUND');
    }
  });

  it('POST needs an array on the primary path; returns rows with Prefer', async () => {
    let r = await call(t, 'POST', '/api/database/records/items', { headers: h(), body: { name: 'x' } });
    expect(r.status).toBe(400);
    envelope(r);
    r = await call(t, 'POST', '/api/database/records/items', {
      headers: { ...h(), prefer: 'return=representation' },
      body: [
        { name: 'p1', qty: 100 },
        { name: 'p2', meta: [1, 2] },
      ],
    });
    expect(r.status).toBe(201);
    expect(r.body).toHaveLength(2);
    expect(r.body[0]).toMatchObject({ name: 'p1', qty: 100, done: false, meta: null });
    expect(r.body[1]).toMatchObject({ name: 'p2', qty: null, meta: [1, 2] });
    r = await call(t, 'POST', '/api/database/records/items?select=name,qty', {
      headers: { ...h(), prefer: 'return=representation' },
      body: [{ name: 'p3', qty: '7', price: '2.5', done: 'true', code: 123 }],
    });
    expect(r.status).toBe(201);
    expect(r.body).toEqual([{ name: 'p3', qty: 7 }]);
    r = await call(t, 'DELETE', '/api/database/records/items?name=eq.p3&select=code,price,done', {
      headers: { ...h(), prefer: 'return=representation' },
    });
    expect(r.body).toEqual([{ code: '123', price: 2.5, done: true }]);
    r = await call(t, 'POST', '/api/database/records/items?qty=eq.1', { headers: h(), body: [{ name: 'x' }] });
    expect(r.status).toBe(400);
    r = await call(t, 'POST', '/api/database/records/items', { headers: h(), body: [] });
    expect(r.status).toBe(400);
    r = await call(t, 'POST', '/api/database/records/items', { headers: h(), body: [{ name: 'x', qty: '' }] });
    expect(r.status).toBe(400);
    expect(envelope(r).error).toBe('INVALID_VALUE');
    expect(r.body.message).toContain('qty');
    r = await call(t, 'POST', '/api/database/records/items', { headers: h(), body: [{ name: 'x', ref: '' }] });
    expect(r.status).toBe(400);
    r = await call(t, 'POST', '/api/database/records/items', { headers: h(), body: [{ name: 'x', due: '' }] });
    expect(r.status).toBe(400);
    r = await call(t, 'POST', '/api/database/records/items', { headers: h(), body: [{ name: 'x', bogus: 1 }] });
    expect(r.status).toBe(400);
    expect(r.body.message).toContain('bogus');
    r = await call(t, 'POST', '/api/database/records/items', { headers: h(), body: [{ qty: 1 }] });
    expect(r.status).toBe(400);
    expect(r.body.message).toContain('name');
    r = await call(t, 'POST', '/api/database/records/items', { headers: h(), body: [{ name: 'c1', code: 'dup' }] });
    expect(r.status).toBe(201);
    r = await call(t, 'POST', '/api/database/records/items', { headers: h(), body: [{ name: 'c2', code: 'dup' }] });
    expect(r.status).toBe(409);
    expect(envelope(r).error).toBe('ALREADY_EXISTS');
    r = await call(t, 'POST', '/api/database/records/items', { headers: h(), raw: '{"name":' });
    expect(r.status).toBe(400);
    envelope(r);
  });

  it('refuses a JSON number a double would round, stores the same value sent as a string', async () => {
    await sql(t, 'create table public.bigs (id serial primary key, big bigint)');
    let r = await call(t, 'POST', '/api/db/bigs', { headers: h(), raw: '{"big":9007199254740993}' });
    expect(r.status).toBe(400);
    expect(envelope(r).error).toBe('INVALID_INPUT');
    expect(r.body.message).toContain('"9007199254740993"');
    expect((await sql(t, 'select count(*)::int as n from public.bigs')).rows).toEqual([{ n: 0 }]);
    r = await call(t, 'POST', '/api/db/bigs', { headers: h(), raw: '{"big":"9007199254740993"}' });
    expect(r.status).toBe(201);
    expect((await sql(t, 'select big::text as big from public.bigs')).rows).toEqual([{ big: '9007199254740993' }]);
  });

  it('upserts with on_conflict and merge-duplicates', async () => {
    const prefer = { ...h(), prefer: 'return=representation,resolution=merge-duplicates' };
    let r = await call(t, 'POST', '/api/database/records/items?on_conflict=code', {
      headers: prefer,
      body: [{ name: 'u1', code: 'up', qty: 1 }],
    });
    expect(r.status).toBe(201);
    const id = r.body[0].id;
    r = await call(t, 'POST', '/api/database/records/items?on_conflict=code', {
      headers: prefer,
      body: [{ name: 'u2', code: 'up', qty: 2 }],
    });
    expect(r.status).toBe(201);
    expect(r.body[0]).toMatchObject({ id, name: 'u2', qty: 2 });
    r = await call(t, 'POST', '/api/database/records/items', {
      headers: prefer,
      body: [{ id, name: 'u3', code: 'up' }],
    });
    expect(r.body[0]).toMatchObject({ id, name: 'u3', qty: 2 });
    r = await call(t, 'POST', '/api/database/records/items?on_conflict=code', {
      headers: { ...h(), prefer: 'return=representation,resolution=ignore-duplicates' },
      body: [{ name: 'u4', code: 'up' }],
    });
    expect(r.body).toEqual([]);
    r = await call(t, 'GET', `/api/database/records/items?code=eq.up`, { headers: h() });
    expect(r.body).toHaveLength(1);
    expect(r.body[0].name).toBe('u3');
  });

  it('PATCH and DELETE need filters and honour Prefer', async () => {
    let r = await call(t, 'PATCH', '/api/database/records/items', { headers: h(), body: { qty: 1 } });
    expect(r.status).toBe(400);
    expect(envelope(r).error).toBe('FILTER_REQUIRED');
    r = await call(t, 'DELETE', '/api/database/records/items', { headers: h() });
    expect(r.status).toBe(400);
    expect(envelope(r).error).toBe('FILTER_REQUIRED');
    r = await call(t, 'DELETE', '/api/db/items?select=qty', { headers: h() });
    expect(r.status).toBe(400);
    const before = await call(t, 'GET', '/api/database/records/items?qty=eq.29', { headers: h() });
    r = await call(t, 'PATCH', '/api/database/records/items?qty=eq.29', {
      headers: { ...h(), prefer: 'return=representation' },
      body: { name: 'renamed', price: 1.25 },
    });
    expect(r.status).toBe(200);
    expect(r.body).toHaveLength(1);
    expect(r.body[0]).toMatchObject({ name: 'renamed', price: 1.25 });
    expect(Date.parse(r.body[0].updated_at)).toBeGreaterThanOrEqual(Date.parse(before.body[0].updated_at));
    r = await call(t, 'PATCH', '/api/database/records/items?qty=eq.28', { headers: h(), body: { name: 'x2' } });
    expect(r.status).toBe(204);
    r = await call(t, 'PATCH', '/api/database/records/items?qty=eq.28', { headers: h(), body: { qty: 'ten' } });
    expect(r.status).toBe(400);
    expect(r.body.message).toContain('qty');
    r = await call(t, 'PATCH', '/api/database/records/items?qty=eq.28', { headers: h(), body: { name: null } });
    expect(r.status).toBe(400);
    expect(envelope(r).message).toContain('name');
    r = await call(t, 'DELETE', '/api/database/records/items?qty=eq.28', {
      headers: { ...h(), prefer: 'return=representation' },
    });
    expect(r.status).toBe(200);
    expect(r.body.map((x: any) => x.name)).toEqual(['x2']);
    r = await call(t, 'DELETE', '/api/database/records/items?qty=eq.27', { headers: h() });
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    r = await call(t, 'GET', '/api/database/records/items?qty=in.(27,28)', { headers: h() });
    expect(r.body).toEqual([]);
  });

  it('short path: object POST, Range, 201/204 without Prefer', async () => {
    let r = await call(t, 'POST', '/api/db/items', { headers: h(), body: { name: 'short', qty: 500 } });
    expect(r.status).toBe(201);
    expect(r.text).toBe('');
    r = await call(t, 'POST', '/api/db/items', {
      headers: { ...h(), prefer: 'return=representation' },
      body: { name: 'short2', qty: 501 },
    });
    expect(r.status).toBe(201);
    expect(r.body).toHaveLength(1);
    expect(r.body[0].qty).toBe(501);
    r = await call(t, 'GET', '/api/db/items?qty=lt.10&name=like.item*&order=qty', {
      headers: { ...h(), range: '2-4' },
    });
    expect(r.status).toBe(200);
    expect(r.body.map((x: any) => x.qty)).toEqual([2, 3, 4]);
    // /api/db counts only when Prefer: count asks (PostgREST): the total is '*' here.
    expect(r.headers.get('content-range')).toBe('2-4/*');
    expect(r.headers.get('x-total-count')).toBeNull();
    r = await call(t, 'GET', '/api/db/items?qty=lt.10&name=like.item*&order=qty', {
      headers: { ...h(), range: '2-4', prefer: 'count=exact' },
    });
    expect(r.status).toBe(206);
    expect(r.headers.get('content-range')).toBe('2-4/10');
    r = await call(t, 'GET', '/api/db/items?qty=lt.10', { headers: { ...h(), range: 'bogus' } });
    expect(r.status).toBe(416);
    r = await call(t, 'PATCH', '/api/db/items?qty=eq.500', { headers: h(), body: { name: 'short-upd' } });
    expect(r.status).toBe(204);
    r = await call(t, 'PATCH', '/api/db/items?qty=eq.500', {
      headers: { ...h(), prefer: 'return=representation' },
      body: { qty: 502 },
    });
    expect(r.body[0]).toMatchObject({ name: 'short-upd', qty: 502 });
    r = await call(t, 'DELETE', '/api/db/items?qty=in.(501,502)', { headers: h() });
    expect(r.status).toBe(204);
    r = await call(t, 'GET', '/api/db/items?qty=gte.500', { headers: h() });
    expect(r.body).toEqual([]);
  });

  it('documents every records and table endpoint in the OpenAPI description', async () => {
    const r = await call(t, 'GET', '/api/openapi.json');
    expect(r.status).toBe(200);
    for (const p of [
      '/api/database/records/{table}',
      '/api/db/{table}',
      '/api/db/rpc/{fn}',
      '/api/database/tables',
      '/api/database/tables/{tableName}/schema',
      '/api/database/sql',
    ]) {
      expect(Object.keys(r.body.paths), p).toContain(p);
    }
  });

  it('no credential is 401, a bad one too', async () => {
    for (const [m, p] of [
      ['GET', '/api/database/records/items'],
      ['GET', '/api/db/items'],
      ['POST', '/api/db/rpc/anything'],
      ['GET', '/api/database/tables'],
    ] as const) {
      const r = await call(t, m, p, m === 'POST' ? { body: {} } : {});
      expect(r.status, p).toBe(401);
      envelope(r);
    }
    const r = await call(t, 'GET', '/api/db/items', { headers: { apikey: 'anon_wrong' } });
    expect(r.status).toBe(401);
  });
});
