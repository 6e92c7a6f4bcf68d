// Quoted names (`"my col"`) and JSON paths inside logic trees, through the real
// @supabase/postgrest-js, as PostgREST answers them.
import type { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { postgrestServer } from './helpers.js';

const FIXTURE = [
  `create table public."team list" (id serial primary key, "full name" text not null, "a,b" int, data jsonb)`,
  `create table public."team member" (id serial primary key, "team id" int not null references public."team list"(id), "nick.name" text)`,
  `grant select, insert, update, delete on all tables in schema public to anon, authenticated`,
  `grant usage on all sequences in schema public to anon, authenticated`,
  `insert into public."team list" ("full name", "a,b", data) values ('ann', 1, '{"role":"lead","n":{"k":3}}'), ('bob', 2, '{"role":"dev","n":{"k":5}}'), ('cy', 3, '{"role":"dev"}')`,
  `insert into public."team member" ("team id", "nick.name") values (1, 'a1'), (1, 'a2'), (2, 'b1')`,
];

describe.each(backends())('postgrest-js: quoted names and JSON paths in logic trees (%s)', (backend) => {
  let t: TestApp;
  let db: PostgrestClient;

  beforeAll(async () => {
    ({ t, db } = await postgrestServer(backend, FIXTURE));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('selects, filters and orders by quoted names with spaces, dots and commas', async () => {
    let r: any = await db
      .from('team list')
      .select('id,"full name",total:"a,b"')
      .gte('"a,b"', 2)
      .order('"full name"', { ascending: false });
    expect(r.error).toBeNull();
    expect(r.data).toEqual([
      { id: 3, 'full name': 'cy', total: 3 },
      { id: 2, 'full name': 'bob', total: 2 },
    ]);
    r = await db.from('team list').select('"full name"').in('"full name"', ['ann', 'cy']).order('id');
    expect(r.data).toEqual([{ 'full name': 'ann' }, { 'full name': 'cy' }]);
    r = await db.from('team list').select('"a,b".sum()');
    expect(r.data).toEqual([{ sum: 6 }]);
  });

  it('embeds a quoted relation and filters and orders inside it', async () => {
    const r: any = await db
      .from('team list')
      .select('"full name","team member"("nick.name")')
      .eq('id', 1)
      .order('"nick.name"', { referencedTable: '"team member"', ascending: false });
    expect(r.error).toBeNull();
    expect(r.data).toEqual([{ 'full name': 'ann', 'team member': [{ 'nick.name': 'a2' }, { 'nick.name': 'a1' }] }]);
    const f: any = await db
      .from('team list')
      .select('id,"team member"!inner("nick.name")')
      .eq('"team member"."nick.name"', 'b1');
    expect(f.data).toEqual([{ id: 2, 'team member': [{ 'nick.name': 'b1' }] }]);
  });

  it('writes rows whose columns have quoted names', async () => {
    const r: any = await db
      .from('team member')
      .insert({ 'team id': 3, 'nick.name': 'c1' })
      .select('"team id","nick.name"');
    expect(r.error).toBeNull();
    expect(r.data).toEqual([{ 'team id': 3, 'nick.name': 'c1' }]);
    const u: any = await db
      .from('team member')
      .update({ 'nick.name': 'c2' })
      .eq('"nick.name"', 'c1')
      .select('"nick.name"');
    expect(u.data).toEqual([{ 'nick.name': 'c2' }]);
  });

  it('answers an unknown or malformed quoted name with a 400, never a 500', async () => {
    let r: any = await db.from('team list').select('"no such col"');
    expect([r.status, r.error?.code]).toEqual([400, '42703']);
    r = await db.from('team list').select('id').eq('"full name', 'ann');
    expect(r.status).toBe(400);
    r = await db.from('team list').select('"x"";drop table canary;--"');
    expect(r.status).toBe(400);
    r = await db.from('team list').select('id').or('"full\\"name".eq.ann');
    expect(r.status).toBe(400);
  });

  it('filters on JSON paths inside or=(…) and and=(…)', async () => {
    let r: any = await db.from('team list').select('id').or('data->>role.eq.lead,data->n->>k.eq.5').order('id');
    expect(r.error).toBeNull();
    expect(r.data).toEqual([{ id: 1 }, { id: 2 }]);
    r = await db
      .from('team list')
      .select('id')
      .or('and(data->>role.eq.dev,data->n->k.gt.4),"full name".eq.cy')
      .order('id');
    expect(r.data).toEqual([{ id: 2 }, { id: 3 }]);
    r = await db
      .from('team list')
      .select('id')
      .not('data->>role', 'eq', 'dev')
      .or('data->>role.is.null,data->n->>k.in.(3,4)');
    expect(r.data).toEqual([{ id: 1 }]);
    r = await db.from('team list').select('id').or('"full name"->>x.eq.1');
    expect([r.status, r.error?.code]).toEqual([400, r.error?.code]);
  });
});
