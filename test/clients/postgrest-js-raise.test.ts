// PostgREST's access rules for functions and its errors raised with an HTTP status, through the
// real @supabase/postgrest-js: GET/HEAD only for STABLE/IMMUTABLE functions (405 otherwise), and
// `raise sqlstate 'PGRST'` / `'PT402'` answered with the function's status, headers and JSON.
import type { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { postgrestServer } from './helpers.js';
import { call } from '../helpers/http.js';

const FIXTURE = [
  `create table public.hits (id serial primary key, at timestamptz not null default now())`,
  `grant select, insert on public.hits to anon, authenticated`,
  `grant usage on all sequences in schema public to anon, authenticated`,
  `create function public.hit() returns int language sql as $$ insert into public.hits default values returning id $$`,
  `create function public.count_hits() returns bigint language sql stable as $$ select count(*) from public.hits $$`,
  `create function public.reads_volatile() returns int language sql as $$ select 1 $$`,
  `create function public.pay() returns void language plpgsql as $$ begin raise sqlstate 'PGRST' using message = '{"code":"123","message":"Payment Required","details":"Quota exceeded","hint":"Upgrade your plan"}', detail = '{"status":402,"headers":{"X-Powered-By":"Nerd Rage","Content-Length":"1"}}'; end $$`,
  `create function public.teapot() returns void language plpgsql as $$ begin raise sqlstate 'PT418' using message = 'I am a teapot', detail = 'short and stout', hint = 'pour'; end $$`,
  `create function public.bad_raise() returns void language plpgsql as $$ begin raise sqlstate 'PGRST' using message = 'not json', detail = '{"status":402}'; end $$`,
  `create function public.bad_status() returns void language plpgsql as $$ begin raise sqlstate 'PGRST' using message = '{"message":"x"}', detail = '{"status":200}'; end $$`,
];

describe.each(backends())('postgrest-js: function access modes and raised HTTP errors (%s)', (backend) => {
  let t: TestApp;
  let db: PostgrestClient;

  beforeAll(async () => {
    ({ t, db } = await postgrestServer(backend, FIXTURE));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('refuses GET and HEAD on a VOLATILE function with 405 and writes nothing', async () => {
    let r: any = await db.rpc('hit', {}, { get: true });
    expect([r.status, r.error?.code]).toEqual([405, '25006']);
    expect(r.error.message).toMatch(/POST/);
    r = await db.rpc('hit', {}, { head: true });
    expect(r.status).toBe(405);
    r = await db.rpc('reads_volatile', {}, { get: true });
    expect(r.status).toBe(405);
    r = await db.rpc('count_hits', {}, { get: true });
    expect([r.status, r.data]).toEqual([200, 0]);
    r = await db.rpc('hit');
    expect([r.status, r.data]).toEqual([200, 1]);
    r = await db.rpc('count_hits', {}, { get: true });
    expect(r.data).toBe(1);
    const raw = await call(t, 'GET', '/api/database/rpc/hit', { headers: { Authorization: `Bearer ${t.adminKey}` } });
    expect([raw.status, raw.body.error]).toEqual([405, 'READ_ONLY_CALL']);
  });

  it("answers raise sqlstate 'PGRST' with the function's status, headers and JSON", async () => {
    const r: any = await db.rpc('pay');
    expect(r.status).toBe(402);
    expect(r.error).toMatchObject({
      code: '123',
      message: 'Payment Required',
      details: 'Quota exceeded',
      hint: 'Upgrade your plan',
    });
    const raw = await call(t, 'POST', '/api/db/rpc/pay', {
      headers: { Authorization: `Bearer ${t.adminKey}` },
      body: {},
    });
    expect(raw.status).toBe(402);
    expect(raw.headers.get('x-powered-by')).toBe('Nerd Rage');
    expect(raw.headers.get('content-length')).not.toBe('1');
    expect(raw.body).toMatchObject({
      statusCode: 402,
      error: 'FUNCTION_RAISED',
      code: '123',
      message: 'Payment Required',
    });
  });

  it("answers raise sqlstate 'PT418' with status 418 and the function's message, detail and hint", async () => {
    const r: any = await db.rpc('teapot');
    expect(r.status).toBe(418);
    expect(r.error).toMatchObject({
      code: 'PT418',
      message: 'I am a teapot',
      details: 'short and stout',
      hint: 'pour',
    });
  });

  it('answers a PGRST raise that is not JSON, or has no error status, with 500 PGRST121', async () => {
    for (const fn of ['bad_raise', 'bad_status']) {
      const r: any = await db.rpc(fn);
      expect([fn, r.status, r.error?.code]).toEqual([fn, 500, 'PGRST121']);
      expect(r.error.message).toMatch(/RAISE SQLSTATE 'PGRST'/);
    }
  });
});
