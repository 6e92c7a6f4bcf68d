// PostgREST's answers, through the real @supabase/postgrest-js, for what used to be silently
// wrong (issue 26): RPC results as relations, nxl/nxr, tx=rollback on RPC, max-affected.
import { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { postgrestServer } from './helpers.js';
import { call } from '../helpers/http.js';
import { admin, sql } from '../database/helpers.js';

const FIXTURE = [
  `create table public.people (id serial primary key, username text not null, status text not null, age int)`,
  `create table public.rooms (id serial primary key, name text not null, during int4range not null)`,
  `create table public.ledger (id serial primary key, note text not null)`,
  `create table public.kv (k text primary key, v int)`,
  `grant select, insert, update, delete on all tables in schema public to anon, authenticated`,
  `grant usage on all sequences in schema public to anon, authenticated`,
  `create function public.get_username_and_status() returns table (username text, status text) language sql stable as $$ select username, status from public.people order by id $$`,
  `create function public.people_older(min_age int default 0) returns setof public.people language sql stable as $$ select * from public.people where age >= min_age $$`,
  `create function public.write_ledger(note text) returns setof public.ledger language sql as $$ insert into public.ledger (note) values (note) returning * $$`,
  `create function public.raise_it() returns int language plpgsql as $$ begin raise exception 'not today' using detail = 'the shop is closed', hint = 'come back tomorrow'; end $$`,
  `insert into public.people (username, status, age) values ('ann', 'ONLINE', 30), ('bob', 'OFFLINE', 40), ('cy', 'AWAY', 20), ('dee', 'OFFLINE', 50)`,
  `insert into public.rooms (name, during) values ('a', '[1,5)'), ('b', '[10,20)'), ('c', '[30,40)')`,
];

describe.each(backends())('postgrest-js: answers that used to be silently wrong (%s)', (backend) => {
  let t: TestApp;
  let db: PostgrestClient;

  beforeAll(async () => {
    ({ t, db } = await postgrestServer(backend, FIXTURE));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('applies select, filters, order, limit and Range to an RPC result (GET and POST)', async () => {
    let r: any = await db.rpc('get_username_and_status', {}, { get: true }).neq('status', 'ONLINE');
    expect(r.error).toBeNull();
    expect(r.data).toEqual([
      { username: 'bob', status: 'OFFLINE' },
      { username: 'cy', status: 'AWAY' },
      { username: 'dee', status: 'OFFLINE' },
    ]);
    r = await db
      .rpc('people_older', { min_age: 25 })
      .eq('status', 'OFFLINE')
      .select('username')
      .order('age', { ascending: false });
    expect(r.data).toEqual([{ username: 'dee' }, { username: 'bob' }]);
    r = await db.rpc('people_older', { min_age: 25 }, { get: true }).select('username').order('username').limit(2);
    expect(r.data).toEqual([{ username: 'ann' }, { username: 'bob' }]);
    r = await db.rpc('people_older', {}, { count: 'exact' }).select('username').order('id').range(1, 2);
    expect(r.data).toEqual([{ username: 'bob' }, { username: 'cy' }]);
    expect(r.count).toBe(4);
    r = await db.rpc('people_older', { min_age: 45 }).select('username, age').single();
    expect(r.data).toEqual({ username: 'dee', age: 50 });
    // A value is only a value, in a filter of an RPC result as anywhere.
    r = await db.rpc('get_username_and_status', {}, { get: true }).eq('username', "x'; drop table people; --");
    expect([r.error, r.data]).toEqual([null, []]);
  });

  it('reads nxl as &> and nxr as &< (PostgREST)', async () => {
    let r: any = await db.from('rooms').select('name').filter('during', 'nxl', '[8,12)').order('name');
    expect(r.data).toEqual([{ name: 'b' }, { name: 'c' }]);
    r = await db.from('rooms').select('name').filter('during', 'nxr', '[8,12)').order('name');
    expect(r.data).toEqual([{ name: 'a' }]);
    r = await db.from('rooms').select('name').rangeAdjacent('during', '[5,10)').order('name');
    expect(r.data).toEqual([{ name: 'a' }, { name: 'b' }]);
  });

  it('rolls back the writes of an RPC with Prefer: tx=rollback, and answers as if committed', async () => {
    const r: any = await db.rpc('write_ledger', { note: 'ghost' }).select('note').rollback();
    expect(r.error).toBeNull();
    expect(r.data).toEqual([{ note: 'ghost' }]);
    expect((await db.from('ledger').select('note')).data).toEqual([]);
    const kept: any = await db.rpc('write_ledger', { note: 'kept' }).select('note');
    expect(kept.data).toEqual([{ note: 'kept' }]);
    expect((await db.from('ledger').select('note')).data).toEqual([{ note: 'kept' }]);
  });

  it('refuses a write over Prefer: max-affected with handling=strict (PGRST124), changing nothing', async () => {
    // postgrest-js types maxAffected for PostgREST 13+ only; the request it sends is the same.
    const db13: any = db;
    const del: any = await db13.from('people').delete().eq('status', 'OFFLINE').maxAffected(1);
    expect(del.status).toBe(400);
    expect(del.error).toMatchObject({ code: 'PGRST124' });
    expect((await db.from('people').select('id', { count: 'exact', head: true })).count).toBe(4);
    const upd: any = await db13.from('people').update({ age: 1 }).gt('age', 0).maxAffected(3).select('age');
    expect(upd.error).toMatchObject({ code: 'PGRST124' });
    expect((await db.from('people').select('age').eq('age', 1)).data).toEqual([]);
    const ok: any = await db13.from('people').update({ age: 31 }).eq('username', 'ann').maxAffected(1).select('age');
    expect([ok.error, ok.data]).toEqual([null, [{ age: 31 }]]);
    // Without handling=strict the preference is ignored (PostgREST's lenient default).
    const lenient = await call(t, 'PATCH', '/api/db/people?age=gt.0', {
      headers: { ...admin(t), prefer: 'max-affected=1' },
      body: { status: 'SEEN' },
    });
    expect(lenient.status).toBe(204);
  });

  it("gives PostgREST's code, details and hint beside the envelope, and its .single() text", async () => {
    const many: any = await db.from('people').select('username').single();
    expect(many.error).toEqual(
      expect.objectContaining({
        code: 'PGRST116',
        message: 'Cannot coerce the result to a single JSON object',
        details: 'The result contains 4 rows',
        hint: null,
      }),
    );
    const none: any = await db.from('people').select('username').eq('id', -1).single();
    expect(none.error).toMatchObject({ code: 'PGRST116', details: 'The result contains 0 rows' });
    const raised: any = await db.rpc('raise_it');
    expect(raised.status).toBe(400);
    expect(raised.error).toMatchObject({ code: 'P0001', details: 'the shop is closed', hint: 'come back tomorrow' });
    expect(raised.error.message).toContain('not today');
    const badJson = await t.fetch('/api/db/people', {
      method: 'POST',
      headers: { ...admin(t), 'content-type': 'application/json' },
      body: '{"username":',
    });
    const body = await badJson.json();
    expect([badJson.status, body.code, typeof body.nextActions]).toEqual([400, 'PGRST102', 'string']);
  });

  it('answers 206 for a counted partial page, 200 for an upsert that inserted nothing, and says what it applied', async () => {
    await sql(t, `insert into public.kv values ('a', 1), ('b', 2), ('c', 3)`);
    const page: any = await db.from('kv').select('k', { count: 'exact' }).order('k').range(0, 1);
    expect([page.status, page.count, page.data]).toEqual([206, 3, [{ k: 'a' }, { k: 'b' }]]);
    const whole: any = await db.from('kv').select('k', { count: 'exact' });
    expect([whole.status, whole.count]).toEqual([200, 3]);
    const uncounted: any = await db.from('kv').select('k').range(0, 1);
    expect(uncounted.status).toBe(200);
    const rpcPage: any = await db.rpc('get_username_and_status', {}, { count: 'exact' }).range(0, 0);
    expect([rpcPage.status, rpcPage.count]).toEqual([206, 4]);
    const merged: any = await db
      .from('kv')
      .upsert([
        { k: 'a', v: 10 },
        { k: 'b', v: 20 },
      ])
      .select('k, v');
    expect([merged.status, merged.data]).toEqual([
      200,
      [
        { k: 'a', v: 10 },
        { k: 'b', v: 20 },
      ],
    ]);
    const mixed: any = await db
      .from('kv')
      .upsert([
        { k: 'a', v: 11 },
        { k: 'd', v: 4 },
      ])
      .select('k');
    expect(mixed.status).toBe(201);
    const minimal = await call(t, 'POST', '/api/db/kv', {
      headers: { ...admin(t), prefer: 'resolution=merge-duplicates, return=minimal' },
      body: [{ k: 'c', v: 30 }],
    });
    expect([minimal.status, minimal.headers.get('preference-applied')]).toEqual([
      200,
      'return=minimal, resolution=merge-duplicates',
    ]);
    const fresh = await call(t, 'POST', '/api/db/kv', {
      headers: { ...admin(t), prefer: 'resolution=ignore-duplicates' },
      body: [{ k: 'e', v: 5 }],
    });
    expect(fresh.status).toBe(201);
    const rolled = await call(t, 'POST', '/api/db/rpc/write_ledger', {
      headers: { ...admin(t), prefer: 'tx=rollback' },
      body: { note: 'x' },
    });
    expect(rolled.headers.get('preference-applied')).toBe('tx=rollback');
    const strict = await call(t, 'DELETE', '/api/db/kv?k=eq.e', {
      headers: { ...admin(t), prefer: 'handling=strict, max-affected=5' },
    });
    expect([strict.status, strict.headers.get('preference-applied')]).toEqual([204, 'handling=strict, max-affected=5']);
  });

  it('answers CSV, JSON without nulls, 406 for geo+json without PostGIS, and the plan to admins only', async () => {
    await sql(t, `insert into public.kv values ('n', null), ('q', 7)`);
    const csv: any = await db.from('kv').select('k, v').in('k', ['n', 'q']).order('k').csv();
    expect([csv.error, csv.data]).toEqual([null, 'k,v\nn,\nq,7']);
    const quoted: any = await db.rpc('get_username_and_status').eq('username', 'ann').select('username').csv();
    expect(quoted.data).toBe('username\nann');
    const stripped = await call(t, 'GET', '/api/db/kv?select=k,v&k=in.(n,q)&order=k', {
      headers: { ...admin(t), accept: 'application/vnd.pgrst.array+json;nulls=stripped' },
    });
    expect([stripped.status, stripped.headers.get('content-type'), JSON.parse(stripped.text)]).toEqual([
      200,
      'application/vnd.pgrst.array+json; nulls=stripped; charset=utf-8',
      [{ k: 'n' }, { k: 'q', v: 7 }],
    ]);
    const geo: any = await db.from('kv').select('k').geojson();
    expect([geo.status, geo.error?.code]).toEqual([406, 'PGRST107']);
    const unknown = await call(t, 'GET', '/api/db/kv', { headers: { ...admin(t), accept: 'application/xml' } });
    expect([unknown.status, unknown.body.code]).toEqual([406, 'PGRST107']);
    const browser = await call(t, 'GET', '/api/db/kv?k=eq.q', {
      headers: { ...admin(t), accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
    });
    expect([browser.status, browser.body]).toEqual([200, [{ k: 'q', v: 7 }]]);
    const plan: any = await db.from('kv').select('k').eq('k', 'q').explain({ format: 'json' });
    expect(plan.error).toBeNull();
    expect(plan.data[0].Plan).toBeDefined();
    const text: any = await db.from('kv').select('k').explain({ analyze: true });
    expect(typeof text.data).toBe('string');
    expect(text.data).toContain('actual time');
    const anon = new PostgrestClient(`${t.url}/api/db`, { headers: { apikey: t.anonKey } });
    const refused: any = await anon.from('kv').select('k').explain();
    expect([refused.status, refused.error?.code]).toEqual([406, 'PGRST107']);
  });
});
