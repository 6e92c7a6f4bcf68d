// "Test as user" (POST /api/database/sql/as): a statement runs as a user or anon with their
// policies, and is always rolled back. On every backend.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { call } from '../helpers/http.js';

describe.each(backends())('sql as a user on %s', (backend) => {
  let t: TestApp;
  let admin: { headers: Record<string, string> };
  let ada: Awaited<ReturnType<typeof createTestUser>>;
  let bob: Awaited<ReturnType<typeof createTestUser>>;
  const sqlAs = (query: string, userId: string | null) =>
    call(t, 'POST', '/api/database/sql/as', { ...admin, body: { query, userId } });

  beforeAll(async () => {
    t = await startApp(backend);
    admin = { headers: { 'x-api-key': t.adminKey } };
    [ada, bob] = [await createTestUser(t), await createTestUser(t)];
    const sql = async (query: string, params: unknown[] = []) =>
      expect((await call(t, 'POST', '/api/database/sql', { ...admin, body: { query, params } })).status).toBe(200);
    await sql(
      `create table public.todos (id serial primary key, owner uuid, title text, public boolean not null default false)`,
    );
    await sql(`alter table public.todos enable row level security`);
    await sql(`grant select, insert, update, delete on public.todos to anon, authenticated`);
    await sql(`grant usage on sequence public.todos_id_seq to authenticated`);
    await sql(
      `create policy own on public.todos for all to authenticated using (owner = auth.uid()) with check (owner = auth.uid())`,
    );
    await sql(`create policy pub on public.todos for select to anon using (public)`);
    await sql(
      `insert into public.todos (owner, title, public) values ($1, 'ada private', false), ($2, 'bob public', true)`,
      [ada.userId, bob.userId],
    );
  });
  afterAll(async () => t?.close());

  it('shows a user only the rows their policies let them see', async () => {
    const r = await sqlAs('select title from public.todos order by id', ada.userId);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ rows: [{ title: 'ada private' }], rowCount: 1, role: 'authenticated', rolledBack: true });
    expect((await sqlAs('select auth.uid() as me', bob.userId)).body.rows).toEqual([{ me: bob.userId }]);
  });

  it('shows anon the public rows only', async () => {
    const r = await sqlAs('select title from public.todos order by id', null);
    expect(r.body).toMatchObject({ rows: [{ title: 'bob public' }], role: 'anon' });
  });

  it('rolls back whatever the statement changed', async () => {
    const r = await sqlAs(
      `insert into public.todos (owner, title) values ('${ada.userId}', 'kept?') returning title`,
      ada.userId,
    );
    expect(r.body, JSON.stringify(r.body)).toMatchObject({ rows: [{ title: 'kept?' }] });
    const all = await call(t, 'POST', '/api/database/sql', {
      ...admin,
      body: { query: 'select count(*)::int as n from public.todos' },
    });
    expect(all.body.rows).toEqual([{ n: 2 }]);
  });

  it('answers bad input with the envelope: SQL errors 400, unknown users 404, non-admins 401', async () => {
    const bad = await sqlAs('select nope from public.todos', ada.userId);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: 'SQL_ERROR', nextActions: expect.any(String) });
    const denied = await sqlAs('delete from auth.users', ada.userId);
    expect(denied.status, JSON.stringify(denied.body)).toBe(400);
    expect(denied.body.message).toMatch(/permission denied/);
    expect((await sqlAs('select 1', '00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect(
      (await call(t, 'POST', '/api/database/sql/as', { body: { query: 'select 1', userId: 'not-a-uuid' }, ...admin }))
        .status,
    ).toBe(400);
    const anon = await call(t, 'POST', '/api/database/sql/as', {
      headers: { apikey: t.anonKey },
      body: { query: 'select 1', userId: null },
    });
    expect([401, 403]).toContain(anon.status);
  });
});
