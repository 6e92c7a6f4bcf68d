// The select grammar of PostgREST 12/13 (issue 26, item 3) through the real postgrest-js, on
// both backends: aggregates, spread embeds, JSON paths in filters and order, computed fields.
import type { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { postgrestServer } from './helpers.js';
import { call } from '../helpers/http.js';
import { admin, envelope, sql } from '../database/helpers.js';

const FIXTURE = [
  `create table public.customers (id int primary key, name text not null)`,
  `create table public.orders (id int primary key, customer_id int references public.customers(id), amount numeric not null, status text not null, data jsonb, meta json)`,
  `create function public.label(o public.orders) returns text language sql stable as $$ select o.status || '#' || o.id $$`,
  `insert into public.customers values (1, 'Ann'), (2, 'Bob'), (3, 'Cy')`,
  `insert into public.orders values
     (1, 1, 10, 'paid', '{"color":"red","size":2}', '{"tag":"a"}'),
     (2, 1, 20, 'open', '{"color":"blue","size":1}', '{"tag":"b"}'),
     (3, 2, 5, 'paid', '{"color":"green","size":3}', '{"tag":"a"}'),
     (4, null, 1, 'void', null, null)`,
];

describe.each(backends())('postgrest-js: select grammar (%s)', (backend) => {
  let t: TestApp;
  let db: PostgrestClient;

  beforeAll(async () => {
    ({ t, db } = await postgrestServer(backend, FIXTURE));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('aggregates over every matching row, grouped by the other columns, with casts and aliases', async () => {
    let r: any = await db
      .from('orders')
      .select('amount.sum(), avg:amount.avg()::int, count(), amount.max()')
      .neq('status', 'void');
    expect([r.error, r.data]).toEqual([null, [{ sum: 35, avg: 12, count: 3, max: 20 }]]);
    r = await db.from('orders').select('status, total:amount.sum(), n:count()').order('status');
    expect(r.data).toEqual([
      { status: 'open', total: 20, n: 1 },
      { status: 'paid', total: 15, n: 2 },
      { status: 'void', total: 1, n: 1 },
    ]);
    r = await db.from('orders').select('status, count()', { count: 'exact' }).order('status').limit(1);
    expect([r.data, r.count]).toEqual([[{ status: 'open', count: 1 }], 3]);
    r = await db.from('orders').select('amount::int.min()');
    expect(r.data).toEqual([{ min: 1 }]);
  });

  it('aggregates inside embeds: messages(count) and messages(col.sum())', async () => {
    let r: any = await db.from('customers').select('name, orders(count)').order('id');
    expect(r.data).toEqual([
      { name: 'Ann', orders: [{ count: 2 }] },
      { name: 'Bob', orders: [{ count: 1 }] },
      { name: 'Cy', orders: [{ count: 0 }] },
    ]);
    r = await db
      .from('customers')
      .select('name, orders(status, amount.sum())')
      .eq('id', 1)
      .order('status', { referencedTable: 'orders' });
    expect(r.data).toEqual([
      {
        name: 'Ann',
        orders: [
          { status: 'open', sum: 20 },
          { status: 'paid', sum: 10 },
        ],
      },
    ]);
    const mixed = await call(t, 'GET', '/api/db/customers?select=count(),orders(id)', { headers: admin(t) });
    expect(mixed.status).toBe(400);
    envelope(mixed);
  });

  it('spreads a to-one embed into the row and a to-many embed into arrays', async () => {
    let r: any = await db.from('orders').select('id, ...customers(customer:name)').order('id');
    expect(r.data).toEqual([
      { id: 1, customer: 'Ann' },
      { id: 2, customer: 'Ann' },
      { id: 3, customer: 'Bob' },
      { id: 4, customer: null },
    ]);
    r = await db
      .from('customers')
      .select('name, ...orders(amount, status)')
      .order('id')
      .order('id', { referencedTable: 'orders' });
    expect(r.data).toEqual([
      { name: 'Ann', amount: [10, 20], status: ['paid', 'open'] },
      { name: 'Bob', amount: [5], status: ['paid'] },
      { name: 'Cy', amount: [], status: [] },
    ]);
    const aliased = await call(t, 'GET', '/api/db/orders?select=x:...customers(name)', { headers: admin(t) });
    expect(aliased.status).toBe(400);
  });

  it('filters and orders by JSON paths (-> and ->>) on jsonb and json columns', async () => {
    let r: any = await db.from('orders').select('id').eq('data->>color', 'red');
    expect(r.data).toEqual([{ id: 1 }]);
    r = await db.from('orders').select('id').gte('data->size', 2).order('id');
    expect(r.data).toEqual([{ id: 1 }, { id: 3 }]);
    r = await db
      .from('orders')
      .select('id, color:data->>color')
      .not('data', 'is', null)
      .order('data->>color', { ascending: false });
    expect(r.data).toEqual([
      { id: 1, color: 'red' },
      { id: 3, color: 'green' },
      { id: 2, color: 'blue' },
    ]);
    r = await db.from('orders').select('id').eq('meta->>tag', 'a').order('id');
    expect(r.data).toEqual([{ id: 1 }, { id: 3 }]);
    r = await db.from('orders').select('id').in('data->>color', ['red', 'green']).order('id');
    expect(r.data).toEqual([{ id: 1 }, { id: 3 }]);
    r = await db.from('orders').select('id').ilike('data->>color', '%E%').order('id');
    expect(r.data).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);
    for (const q of [
      'status->>x=eq.1',
      'data->size=eq.notjson',
      "data->>x'y=eq.1",
      'order=data->>',
      'order=status->x',
    ]) {
      const bad = await call(t, 'GET', `/api/db/orders?${q}`, { headers: admin(t) });
      expect(bad.status, q).toBe(400);
      envelope(bad);
    }
  });

  it('reads computed fields (functions of the row type) in select, filters, order and embeds, never in * or writes', async () => {
    let r: any = await db.from('orders').select('id, label').eq('label', 'paid#3');
    expect([r.error, r.data]).toEqual([null, [{ id: 3, label: 'paid#3' }]]);
    r = await db.from('orders').select('label').in('status', ['paid', 'open']).order('label', { ascending: false });
    expect(r.data).toEqual([{ label: 'paid#3' }, { label: 'paid#1' }, { label: 'open#2' }]);
    r = await db.from('customers').select('name, orders(label)').eq('id', 2);
    expect(r.data).toEqual([{ name: 'Bob', orders: [{ label: 'paid#3' }] }]);
    r = await db.from('orders').select('*').eq('id', 4);
    expect(Object.keys(r.data[0])).not.toContain('label');
    const write: any = await db.from('orders').insert({ id: 9, amount: 1, status: 'x', label: 'no' });
    expect([write.status, write.error?.code]).toEqual([400, '42703']);
    // A computed field created now is seen at once (the schema cache reloads after DDL).
    await sql(
      t,
      `create function public.doubled(o public.orders) returns numeric language sql stable as $$ select o.amount * 2 $$`,
    );
    r = await db.from('orders').select('id, doubled').eq('id', 2);
    expect([r.error, r.data]).toEqual([null, [{ id: 2, doubled: 40 }]]);
  });
});
