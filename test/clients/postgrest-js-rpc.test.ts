// Functions as relations (issue 26, item 2), through the real @supabase/postgrest-js where it
// can say it and raw HTTP where it cannot, on both backends: PostgREST's documented behaviour.
import type { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { postgrestServer } from './helpers.js';
import { call } from '../helpers/http.js';
import { admin, envelope, sql } from '../database/helpers.js';

const FIXTURE = [
  `create table public.people (id serial primary key, username text not null, status text not null, age int)`,
  `create table public.pets (id serial primary key, owner_id int references public.people(id), name text not null)`,
  `create type public.point2 as (x int, y int)`,
  `grant select, insert, update, delete on all tables in schema public to anon, authenticated`,
  `create function public.people_older(min_age int default 0) returns setof public.people language sql stable as $$ select * from public.people where age >= min_age $$`,
  `create function public.first_person() returns public.people language sql stable as $$ select * from public.people order by id limit 1 $$`,
  `create function public.noop() returns void language sql as $$ select $$`,
  `create function public.echo_json(json) returns json language sql as $$ select $1 $$`,
  `create function public.shout(text) returns text language sql as $$ select upper($1) $$`,
  `create function public.byte_len(bytea) returns int language sql as $$ select length($1) $$`,
  `create function public.label(p public.people) returns text language sql as $$ select p.username || ':' || p.status $$`,
  `create function public.norm(pt public.point2) returns int language sql as $$ select abs(pt.x) + abs(pt.y) $$`,
  `create function public.pick(x int) returns text language sql as $$ select 'int' $$`,
  `create function public.pick(x text) returns text language sql as $$ select 'text' $$`,
  `create function public.pick(x int, y int) returns text language sql as $$ select 'two' $$`,
  `create function public.squares(n int) returns table (i int, sq int) language sql immutable as $$ select g, g * g from generate_series(1, n) g $$`,
  `insert into public.people (username, status, age) values ('ann', 'ONLINE', 30), ('bob', 'OFFLINE', 40), ('cy', 'AWAY', 20), ('dee', 'OFFLINE', 50)`,
  `insert into public.pets (owner_id, name) values (1, 'rex'), (2, 'tom'), (2, 'kit')`,
];

describe.each(backends())('postgrest-js: functions as relations (%s)', (backend) => {
  let t: TestApp;
  let db: PostgrestClient;
  const post = (fn: string, body: unknown, headers: Record<string, string> = {}) =>
    call(t, 'POST', `/api/db/rpc/${fn}`, { headers: { ...admin(t), ...headers }, body });

  beforeAll(async () => {
    ({ t, db } = await postgrestServer(backend, FIXTURE));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('counts, heads, embeds and singles an RPC result like a table', async () => {
    const head: any = await db.rpc('people_older', { min_age: 25 }, { head: true, count: 'exact' });
    expect([head.status, head.data, head.count]).toEqual([200, null, 3]);
    const counted: any = await db
      .rpc('people_older', {}, { count: 'exact' })
      .gt('age', 25)
      .select('username')
      .order('id')
      .limit(1);
    expect([counted.data, counted.count]).toEqual([[{ username: 'ann' }], 3]);
    const embedded: any = await db
      .rpc('people_older', { min_age: 35 })
      .select('username, pets(name)')
      .order('id')
      .order('name', { referencedTable: 'pets' });
    expect(embedded.data).toEqual([
      { username: 'bob', pets: [{ name: 'kit' }, { name: 'tom' }] },
      { username: 'dee', pets: [] },
    ]);
    const many: any = await db.rpc('people_older').select('username').single();
    expect([many.status, many.error?.code]).toEqual([406, 'PGRST116']);
    const table: any = await db.rpc('squares', { n: 4 }, { get: true }).gte('sq', 4).order('i', { ascending: false });
    expect(table.data).toEqual([
      { i: 4, sq: 16 },
      { i: 3, sq: 9 },
      { i: 2, sq: 4 },
    ]);
  });

  it('answers a function of one row type with the object, and void with 204', async () => {
    const one: any = await db.rpc('first_person').select('username');
    expect(one.data).toEqual({ username: 'ann' });
    const r = await post('noop', {});
    expect([r.status, r.text]).toEqual([204, '']);
    const v: any = await db.rpc('noop');
    expect([v.status, v.data, v.error]).toEqual([204, null, null]);
  });

  it('answers unknown arguments with 404 PGRST202 and overloads it cannot tell apart with 300 PGRST203', async () => {
    const unknown: any = await db.rpc('people_older', { nope: 1 });
    expect([unknown.status, unknown.error?.code]).toEqual([404, 'PGRST202']);
    expect(unknown.error?.hint).toBe('Perhaps you meant to call the function public.people_older(min_age)');
    const ambiguous = await post('pick', { x: 1 });
    expect([ambiguous.status, ambiguous.body.code]).toEqual([300, 'PGRST203']);
    envelope(ambiguous);
    // PostgREST's message lists the candidates (details null).
    expect(ambiguous.body.message).toContain('public.pick(x => integer), public.pick(x => text)');
    const two: any = await db.rpc('pick', { x: 1, y: 2 });
    expect(two.data).toBe('two');
    const none: any = await db.rpc('no_such_function');
    expect([none.status, none.error?.code]).toEqual([404, 'PGRST202']);
  });

  it('passes the whole body to one unnamed json, text or bytea parameter', async () => {
    let r = await post('echo_json', { a: [1, 2], b: { c: null } });
    expect([r.status, r.body]).toEqual([200, { a: [1, 2], b: { c: null } }]);
    r = await post('echo_json', [1, 'two']);
    expect(r.body).toEqual([1, 'two']);
    const text = await t.fetch('/api/db/rpc/shout', {
      method: 'POST',
      headers: { ...admin(t), 'content-type': 'text/plain' },
      body: 'hello there',
    });
    expect([text.status, await text.json()]).toEqual([200, 'HELLO THERE']);
    const bytes = await t.fetch('/api/db/rpc/byte_len', {
      method: 'POST',
      headers: { ...admin(t), 'content-type': 'application/octet-stream' },
      body: new Uint8Array([0, 1, 2, 255, 0]),
    });
    expect([bytes.status, await bytes.json()]).toEqual([200, 5]);
  });

  it('takes a table row type or a composite type argument as a JSON object', async () => {
    const row: any = await db.rpc('label', { p: { id: 9, username: 'zed', status: 'NEW', age: 1 } });
    expect([row.error, row.data]).toEqual([null, 'zed:NEW']);
    const pt: any = await db.rpc('norm', { pt: { x: -3, y: 4 } });
    expect(pt.data).toBe(7);
    const bad = await post('norm', { pt: { x: 'nope' } });
    expect(bad.status).toBe(400);
    envelope(bad);
  });

  it("sees a function changed by DDL: through the admin API at once, behind this instance's back after one miss", async () => {
    expect((await db.rpc('pick', { x: 1, y: 2 })).data).toBe('two');
    await sql(
      t,
      `create or replace function public.pick(x int, y int) returns text language sql as $$ select 'new two' $$`,
    );
    expect((await db.rpc('pick', { x: 1, y: 2 })).data).toBe('new two');
    // Another instance (here: the database directly) adds an overload: the first call that
    // misses it forgets the remembered overloads, the next one finds it.
    await t.deps.db.query(`create function public.pick(z text, w text) returns text language sql as $$ select 'z' $$`);
    const first: any = await db.rpc('pick', { z: 'a', w: 'b' });
    const second: any = first.error ? await db.rpc('pick', { z: 'a', w: 'b' }) : first;
    expect([second.error, second.data]).toEqual([null, 'z']);
  });
});
