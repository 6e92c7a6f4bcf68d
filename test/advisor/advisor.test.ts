// The advisor: each rule's problem is made, found, fixed with the finding's own SQL, and gone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { call } from '../helpers/http.js';
import { admin, anon, envelope, sql } from '../database/helpers.js';

describe.each(backends())('advisor over HTTP (%s)', (backend) => {
  let t: TestApp;
  const scan = async () => {
    const r = await call(t, 'POST', '/api/advisor/scan', { headers: admin(t) });
    expect(r.status, r.text).toBe(200);
    return r.body.issues as Array<{
      key: string;
      rule: string;
      severity: string;
      fixSql: string | null;
      object: { name: string };
      why: string;
      suppressed: boolean;
    }>;
  };
  const find = async (key: string) => (await scan()).find((i) => i.key === key);
  /** Sees the finding, runs its fix SQL through admin SQL, sees it gone. */
  const fixes = async (key: string) => {
    const f = await find(key);
    expect(f, `finding ${key}`).toBeDefined();
    expect(f!.why.length).toBeGreaterThan(20);
    expect(f!.fixSql).toBeTruthy();
    await sql(t, f!.fixSql!);
    expect(await find(key), `${key} after its fix`).toBeUndefined();
  };
  beforeAll(async () => {
    t = await startApp(backend);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('security: RLS off, then no policy, then USING (true) on personal data', async () => {
    await sql(
      t,
      'create table public.people (id uuid primary key default gen_random_uuid(), user_id uuid, email text, phone text)',
    );
    await sql(t, 'grant select, insert on public.people to anon, authenticated');
    const f = await find('rls_disabled_reachable:public.people');
    expect(f?.severity).toBe('critical');
    await fixes('rls_disabled_reachable:public.people');
    await fixes('rls_enabled_no_policy:public.people');
    await sql(t, 'create policy open_read on public.people for select to anon using (true)');
    const open = await find('policy_true_on_personal_data:public.people.open_read');
    expect(open?.severity).toBe('critical');
    await fixes('policy_true_on_personal_data:public.people.open_read');
    expect((await call(t, 'GET', '/api/database/records/people', { headers: anon(t) })).body).toEqual([]);
  });

  it('security: SECURITY DEFINER without search_path, public buckets, functions calling private URLs', async () => {
    await sql(t, `create function public.sd() returns int language sql security definer as 'select 1'`);
    await fixes('security_definer_search_path:public.sd()');
    expect(
      (
        await call(t, 'POST', '/api/storage/buckets', {
          headers: admin(t),
          body: { bucketName: 'pub', isPublic: true },
        })
      ).status,
    ).toBe(201);
    await fixes('public_bucket:pub');
    await t.deps.db.query(`insert into functions.functions (slug, name, code) values ('hook', 'hook', $1)`, [
      `export default async () => fetch('http://169.254.169.254/latest/meta-data/')`,
    ]);
    const ssrf = await find('private_url_call:hook');
    expect(ssrf?.fixSql).toBeNull();
    await t.deps.db.query(`update functions.functions set code = $1 where slug = 'hook'`, [
      `export default async () => fetch('https://api.example.com/')`,
    ]);
    expect(await find('private_url_call:hook')).toBeUndefined();
  });

  it('performance: foreign keys and policy columns without index, auth.uid() per row, duplicate indexes', async () => {
    await sql(t, 'create table public.parents (id int primary key)');
    await sql(t, 'create table public.kids (id int primary key, parent_id int references public.parents (id))');
    await fixes('foreign_key_without_index:public.kids.kids_parent_id_fkey');
    await sql(t, 'create table public.docs (id int primary key, owner uuid)');
    await sql(t, 'alter table public.docs enable row level security');
    await sql(t, 'create policy mine on public.docs for select to authenticated using (owner = auth.uid())');
    await fixes('policy_auth_call_per_row:public.docs.mine');
    const policy = await sql(t, `select qual from pg_policies where policyname = 'mine'`);
    expect(policy.rows[0].qual).toContain('SELECT auth.uid()');
    await fixes('policy_column_without_index:public.docs.owner');
    await sql(t, 'create index docs_owner_again on public.docs (owner)');
    await fixes('duplicate_index:public.docs_owner_again');
  });

  it('suppresses a finding by key and reports it again when the suppression goes', async () => {
    expect(
      (
        await call(t, 'POST', '/api/storage/buckets', {
          headers: admin(t),
          body: { bucketName: 'assets', isPublic: true },
        })
      ).status,
    ).toBe(201);
    const key = 'public_bucket:assets';
    expect(await find(key)).toBeDefined();
    const s = await call(t, 'POST', '/api/advisor/suppressions', {
      headers: admin(t),
      body: { key, reason: 'site assets are public on purpose' },
    });
    expect(s.status, s.text).toBe(201);
    await scan();
    const visible = await call(t, 'GET', '/api/advisor/issues', { headers: admin(t) });
    expect(visible.body.issues.map((i: any) => i.key)).not.toContain(key);
    const all = await call(t, 'GET', '/api/advisor/issues?includeSuppressed=true&category=security', {
      headers: admin(t),
    });
    expect(all.body.issues.find((i: any) => i.key === key)?.suppressed).toBe(true);
    expect((await call(t, 'GET', '/api/advisor/suppressions', { headers: admin(t) })).body.suppressions).toEqual([
      { key, reason: 'site assets are public on purpose', createdAt: expect.any(String) },
    ]);
    expect(
      (await call(t, 'DELETE', `/api/advisor/suppressions/${encodeURIComponent(key)}`, { headers: admin(t) })).status,
    ).toBe(200);
    expect(
      (await call(t, 'GET', '/api/advisor/issues', { headers: admin(t) })).body.issues.map((i: any) => i.key),
    ).toContain(key);
    const bad = await call(t, 'POST', '/api/advisor/suppressions', {
      headers: admin(t),
      body: { key: 'nonsense', reason: 'x' },
    });
    expect([bad.status, envelope(bad).error]).toEqual([400, 'INVALID_INPUT']);
    const gone = await call(t, 'DELETE', '/api/advisor/suppressions/nope%3Ax', { headers: admin(t) });
    expect([gone.status, envelope(gone).error]).toEqual([404, 'NOT_FOUND']);
    expect((await call(t, 'POST', '/api/advisor/scan', { headers: anon(t) })).status).toBe(403);
  });
});
