// Schemas other than public (issue 26, item 7): DB_SCHEMAS exposes them, postgrest-js picks one
// with .schema() (Accept-Profile / Content-Profile); an unexposed one is 406 PGRST106.
import { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { call } from '../helpers/http.js';
import { admin, sql } from '../database/helpers.js';

describe.each(backends())('postgrest-js: exposed schemas (%s)', (backend) => {
  let t: TestApp;
  let db: PostgrestClient;

  beforeAll(async () => {
    t = await startApp(backend, { DB_SCHEMAS: 'api' });
    for (const s of [
      `create schema api`,
      `create schema hidden`,
      `grant usage on schema api to anon, authenticated`,
      `create table public.items (id int primary key, name text)`,
      `create table api.items (id int primary key, label text)`,
      `create table api.parts (id int primary key, item_id int references api.items(id), name text)`,
      `create table hidden.items (id int primary key)`,
      `create function api.labels(prefix text) returns setof api.items language sql stable as $$ select * from api.items where label like prefix || '%' $$`,
      `insert into public.items values (1, 'in public')`,
      `insert into api.items values (1, 'api one'), (2, 'api two')`,
      `insert into api.parts values (1, 2, 'bolt')`,
    ])
      await sql(t, s);
    db = new PostgrestClient(`${t.url}/api/db`, { headers: { Authorization: `Bearer ${t.adminKey}` } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('reads, writes, embeds and calls functions in an exposed schema; public stays the default', async () => {
    let r: any = await db.from('items').select('*');
    expect(r.data).toEqual([{ id: 1, name: 'in public' }]);
    const api = db.schema('api');
    r = await api.from('items').select('label, parts(name)').order('id');
    expect([r.error, r.data]).toEqual([
      null,
      [
        { label: 'api one', parts: [] },
        { label: 'api two', parts: [{ name: 'bolt' }] },
      ],
    ]);
    const ins: any = await api.from('items').insert({ id: 3, label: 'api three' }).select('label');
    expect([ins.status, ins.data]).toEqual([201, [{ label: 'api three' }]]);
    const upd: any = await api.from('items').update({ label: 'api 3' }).eq('id', 3).select('label');
    expect(upd.data).toEqual([{ label: 'api 3' }]);
    r = await api.rpc('labels', { prefix: 'api t' }).select('id');
    expect(r.data).toEqual([{ id: 2 }]);
    const raw = await call(t, 'GET', '/api/db/items?select=label&id=eq.1', {
      headers: { ...admin(t), 'accept-profile': 'api' },
    });
    expect([raw.body, raw.headers.get('content-profile')]).toEqual([[{ label: 'api one' }], 'api']);
  });

  it('refuses a schema that is not exposed with 406 PGRST106, naming the exposed ones', async () => {
    for (const s of ['hidden', 'pg_catalog', 'auth']) {
      const r: any = await db.schema(s).from('items').select('*');
      expect([r.status, r.error?.code], s).toEqual([406, 'PGRST106']);
      expect(r.error.hint).toContain('public, api');
    }
    const w: any = await db.schema('hidden').from('items').insert({ id: 1 });
    expect([w.status, w.error?.code]).toEqual([406, 'PGRST106']);
  });
});
