// Prefer: count=planned|estimated through the real @supabase/postgrest-js: planned is the
// planner's estimate, estimated is exact up to 1000 rows and the estimate past them; both are
// estimated as the caller, so RLS policies shape the estimate.
import { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { sql } from '../database/helpers.js';

async function fixture(t: TestApp): Promise<void> {
  const statements = [
    `create table public.events (id int primary key, kind text not null)`,
    `insert into public.events select g, case when g % 10 = 0 then 'rare' else 'common' end from generate_series(1, 3000) g`,
    `alter table public.events enable row level security`,
    `create policy events_first on public.events for select to anon using (id <= 1500)`,
    `grant select on public.events to anon, authenticated`,
    `analyze public.events`,
    // Statistics that no longer match the rows (analyzed at 3000, then 2000 deleted): planned and exact differ.
    `create table public.shrunk (id int primary key) with (autovacuum_enabled = false)`,
    `insert into public.shrunk select generate_series(1, 3000)`,
    `analyze public.shrunk`,
    `delete from public.shrunk where id > 1000`,
    `grant select on public.shrunk to anon, authenticated`,
  ];
  for (const s of statements) await sql(t, s);
}

describe.each(backends())('postgrest-js: count=planned and count=estimated (%s)', (backend) => {
  let t: TestApp;
  let admin: PostgrestClient;
  let anon: PostgrestClient;

  beforeAll(async () => {
    t = await startApp(backend);
    await fixture(t);
    admin = new PostgrestClient(`${t.url}/api/db`, { headers: { Authorization: `Bearer ${t.adminKey}` } });
    anon = new PostgrestClient(`${t.url}/api/db`, { headers: { Authorization: `Bearer ${t.anonKey}` } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers count=planned with the planner estimate of the filtered rows, and the real page', async () => {
    let r: any = await admin.from('events').select('id', { count: 'planned' }).order('id').range(0, 9);
    expect(r.data).toHaveLength(10);
    expect(r.status).toBe(206);
    expect(r.count).toBeGreaterThan(2500);
    expect(r.count).toBeLessThan(3500);
    r = await admin.from('events').select('id', { count: 'planned' }).eq('kind', 'rare').limit(5);
    expect(r.count).toBeGreaterThan(150);
    expect(r.count).toBeLessThan(500);
    // Whatever the page, planned is the estimate (PostgREST), never below the rows it holds:
    // the planner never estimates fewer than 1 row, so an empty result still says 1.
    r = await admin.from('events').select('id', { count: 'planned' }).lte('id', 7);
    expect(r.data).toHaveLength(7);
    expect(r.count).toBeGreaterThanOrEqual(7);
    expect(r.count).toBeLessThan(50);
    expect(r.status).toBe(r.count > 7 ? 206 : 200);
    r = await admin.from('events').select('id', { count: 'planned' }).eq('id', -1);
    expect([r.count, r.data, r.status]).toEqual([1, [], 206]);
    r = await admin.from('events').select('id', { count: 'planned', head: true }).eq('kind', 'rare');
    expect([r.data, r.status]).toEqual([null, 206]);
    expect(r.count).toBeGreaterThan(150);
  });

  it('takes the estimate, not a count, for planned (stale statistics show it); estimated counts up to 1000', async () => {
    let r: any = await admin.from('shrunk').select('id', { count: 'planned' }).limit(10);
    expect(r.count).toBeGreaterThan(2500);
    r = await admin.from('shrunk').select('id', { count: 'exact' }).limit(10);
    expect(r.count).toBe(1000);
    r = await admin.from('shrunk').select('id', { count: 'estimated' }).limit(10);
    expect(r.count).toBe(1000);
  });

  it('answers count=estimated exactly up to 1000 rows and with the estimate past them', async () => {
    let r: any = await admin.from('events').select('id', { count: 'estimated' }).lte('id', 999).limit(3);
    expect(r.count).toBe(999);
    r = await admin.from('events').select('id', { count: 'estimated' }).limit(3);
    expect(r.count).toBeGreaterThan(2500);
    expect(r.count).toBeLessThan(3500);
    r = await admin.from('events').select('id', { count: 'exact' }).limit(3);
    expect(r.count).toBe(3000);
  });

  it('estimates as the caller: the RLS policy is part of the plan', async () => {
    const r: any = await anon.from('events').select('id', { count: 'planned', head: true });
    expect(r.count).toBeGreaterThan(1000);
    expect(r.count).toBeLessThan(2000);
    const e: any = await anon.from('events').select('id', { count: 'exact' }).limit(1);
    expect(e.count).toBe(1500);
  });
});
