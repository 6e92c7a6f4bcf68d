// CSV request bodies for inserts on /api/db (PostgREST's text/csv bulk insert; postgrest-js
// cannot send one, so raw HTTP) and the execution plan of RPC calls for admins (postgrest-js
// .explain() on .rpc()).
import { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { call } from '../helpers/http.js';
import { sql } from '../database/helpers.js';

async function fixture(t: TestApp): Promise<void> {
  const statements = [
    `create table public.people (id serial primary key, name text not null, age int, ok boolean, meta jsonb, "nick name" text)`,
    `grant select, insert on public.people to anon, authenticated`,
    `grant usage on all sequences in schema public to anon, authenticated`,
    `create function public.adults() returns setof public.people language sql stable as $$ select * from public.people where age >= 18 $$`,
    `create function public.answer() returns int language sql immutable as $$ select 42 $$`,
  ];
  for (const s of statements) await sql(t, s);
}

describe.each(backends())('CSV bodies and RPC plans (%s)', (backend) => {
  let t: TestApp;
  let admin: PostgrestClient;
  let anon: PostgrestClient;
  const auth = () => ({ Authorization: `Bearer ${t.adminKey}` });

  beforeAll(async () => {
    t = await startApp(backend);
    await fixture(t);
    admin = new PostgrestClient(`${t.url}/api/db`, { headers: auth() });
    anon = new PostgrestClient(`${t.url}/api/db`, { headers: { Authorization: `Bearer ${t.anonKey}` } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('inserts the rows of a text/csv body, NULL as null, quoted cells, JSON cells and quoted names', async () => {
    const csv = 'name,age,ok,meta,"nick name"\r\nann,30,true,"{""a"":1}",a\r\n"bob, jr",NULL,false,NULL,"NULL"\n';
    const r = await call(t, 'POST', '/api/db/people?select=name,age,ok,meta,"nick name"', {
      raw: csv,
      headers: { ...auth(), 'content-type': 'text/csv', prefer: 'return=representation' },
    });
    expect([r.status, r.body.message]).toEqual([201, undefined]);
    expect(r.body).toEqual([
      { name: 'ann', age: 30, ok: true, meta: { a: 1 }, 'nick name': 'a' },
      { name: 'bob, jr', age: null, ok: false, meta: null, 'nick name': 'NULL' },
    ]);
    const read: any = await admin.from('people').select('name').order('id');
    expect(read.data).toEqual([{ name: 'ann' }, { name: 'bob, jr' }]);
  });

  it('answers bad CSV, bad cells and unknown columns with a 400, and CSV on the primary path with 415', async () => {
    const post = (raw: string, path = '/api/db/people') =>
      call(t, 'POST', path, { raw, headers: { ...auth(), 'content-type': 'text/csv' } });
    let r = await post('name,age\nann,30,extra\n');
    expect([r.status, r.body.error]).toEqual([400, 'INVALID_INPUT']);
    r = await post('name,"age\nann,30\n');
    expect(r.status).toBe(400);
    r = await post('name,age\nann,thirty\n');
    expect(r.status).toBe(400);
    r = await post('name,meta\nann,{nope\n');
    expect([r.status, r.body.error]).toEqual([400, 'INVALID_VALUE']);
    r = await post('name,nope\nann,1\n');
    expect([r.status, r.body.code]).toEqual([400, '42703']);
    r = await post('name\nann\n', '/api/database/records/people');
    expect(r.status).toBe(415);
    r = await call(t, 'PATCH', '/api/db/people?id=eq.1', {
      raw: 'name\nx\n',
      headers: { ...auth(), 'content-type': 'text/csv' },
    });
    expect(r.status).toBe(415);
    const count: any = await admin.from('people').select('*', { count: 'exact', head: true });
    expect(count.count).toBe(2);
  });

  it('gives admins the execution plan of an RPC call, JSON or text, and nobody else', async () => {
    let r: any = await admin.rpc('adults', {}, { get: true }).gte('age', 20).explain({ format: 'json' });
    expect(r.error).toBeNull();
    expect(r.data[0].Plan).toBeTruthy();
    r = await admin.rpc('answer').explain();
    expect(typeof r.data).toBe('string');
    expect(r.data).toMatch(/Result|cost=/);
    r = await admin.rpc('adults').explain({ analyze: true, format: 'json' });
    expect(r.data[0]['Execution Time']).toBeGreaterThanOrEqual(0);
    r = await anon.rpc('adults').explain();
    expect([r.status, r.error?.code]).toEqual([406, 'PGRST107']);
  });
});
