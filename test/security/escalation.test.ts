// Issue 40, item 1: the owner role (admin SQL, migrations, schedule SQL, MCP run-raw-sql) is
// not a superuser, and no code that runs with more rights than it may evaluate an object it
// can create or alter. Each test plants the same trap, public.pwn(): run by a superuser (or by
// a session whose login is a superuser, which may SET ROLE back to one), it makes the owner a
// superuser. Every path ends with the owner role still not a superuser (docs/security.md).
import { existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Socket } from 'socket.io-client';
import { backends } from '../helpers/db.js';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { connectSocket, Inbox, subscribe } from '../helpers/realtime.js';
import { migrate, readMigrations } from '../../src/db/migrate.js';

/** The trap: whoever evaluates it with superuser rights, or can take them, promotes `owner`. */
function trapSql(owner: string, marker: string): string {
  // The marker file outlives a rolled-back transaction (COPY to a server file needs superuser).
  const act = `execute format('alter role %I superuser', '${owner}'); copy (select 1) to '${marker}';`;
  return `create or replace function public.pwn() returns boolean language plpgsql as $f$
declare su text;
begin
  if (select rolsuper from pg_roles where rolname = current_user) then
    ${act}
  else
    begin
      select rolname into su from pg_roles where rolsuper order by oid limit 1;
      perform set_config('role', su, true);
      ${act}
    exception when others then null;
    end;
  end if;
  return true;
end $f$`;
}

describe.each(backends())('the owner role cannot make itself superuser (%s)', (backend) => {
  let t: TestApp;
  let owner: string;
  const open: Socket[] = [];
  const admin = () => ({ 'x-api-key': t.adminKey });
  const sql = (query: string) => call(t, 'POST', '/api/database/sql', { headers: admin(), body: { query } });
  let marker: string;
  /** Whether the trap fired with superuser rights: the role promoted, or the marker file written. */
  const superuser = async () =>
    existsSync(marker) ||
    (await t.deps.db.query<{ su: boolean }>('select rolsuper as su from pg_roles where rolname = $1', [owner])).rows[0]!
      .su;

  beforeAll(async () => {
    t = await startApp(backend);
    owner = t.deps.owner.role;
    marker = path.join(tmpdir(), `plinth-trap-${owner}-${Date.now()}`);
    expect(t.deps.owner.separate).toBe(true);
    expect(await superuser()).toBe(false);
    expect((await sql(trapSql(owner, marker))).status).toBe(200);
  });
  afterEach(async () => {
    // A path that worked must not leave the role promoted for the next one.
    if (await superuser()) await t.deps.db.query(`alter role "${owner}" nosuperuser`);
    rmSync(marker, { force: true });
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await t?.close();
  });

  it('A: an assignment cast on realtime.channels.enabled, evaluated by realtime.channel_enabled()', async () => {
    await sql(`create type public.flag as enum ('on', 'off')`);
    await sql(
      `create function public.flag_bool(public.flag) returns boolean language plpgsql as $$ begin perform public.pwn(); return $1 = 'on'; end $$`,
    );
    await sql('create cast (public.flag as boolean) with function public.flag_bool(public.flag) as assignment');
    // The owner must not own realtime.channels: these are refused, the rows stay the admin's to write.
    const alter = await sql(`alter table realtime.channels alter column enabled drop default;
      alter table realtime.channels alter column enabled type public.flag using (case when enabled then 'on' else 'off' end)::public.flag`);
    expect(alter.status).toBe(403);
    expect((await sql(`insert into realtime.channels (pattern) values ('x%')`)).status).toBe(200);
    expect((await sql(`select realtime.channel_enabled('x') as on`)).body.rows).toEqual([{ on: true }]);
    expect(await superuser()).toBe(false);
  });

  it('B: a cast to json on a realtime table, evaluated by realtime.notify_change()', async () => {
    await sql(`create type public.mood as enum ('ok')`);
    await sql(
      `create function public.mood_json(public.mood) returns json language plpgsql as $$ begin perform public.pwn(); return to_json($1::text); end $$`,
    );
    await sql('create cast (public.mood as json) with function public.mood_json(public.mood)');
    await sql('create table public.moods (id uuid primary key default gen_random_uuid(), m public.mood)');
    expect((await call(t, 'POST', '/api/database/tables/moods/realtime', { headers: admin() })).status).toBe(200);
    // Realtime still works on the table: the insert succeeds and fires the trigger.
    expect((await sql(`insert into public.moods (m) values ('ok')`)).status).toBe(200);
    expect(await superuser()).toBe(false);
  });

  it("B': the same cast on a hooked table, evaluated by the webhooks outbox triggers", async () => {
    await sql('create table public.hooked (id uuid primary key default gen_random_uuid(), m public.mood)');
    const hook = await call(t, 'POST', '/api/database/webhooks', {
      headers: admin(),
      body: { name: 'h', table: 'hooked', events: ['INSERT', 'UPDATE', 'DELETE'], url: 'https://hooks.example.com/in' },
    });
    expect(hook.status).toBe(201);
    expect((await sql(`insert into public.hooked (m) values ('ok')`)).status).toBe(200);
    expect((await sql(`update public.hooked set m = 'ok'`)).status).toBe(200);
    expect((await sql('delete from public.hooked')).status).toBe(200);
    const { rows } = await t.deps.db.query<{ n: number }>('select count(*)::int as n from webhooks.outbox');
    const delivered = await t.deps.db.query<{ n: number }>('select count(*)::int as n from webhooks.deliveries');
    expect(rows[0]!.n + delivered.rows[0]!.n).toBeGreaterThanOrEqual(3);
    expect(await superuser()).toBe(false);
  });

  it('a policy run by "test as user" (POST /api/database/sql/as)', async () => {
    const r = await call(t, 'POST', '/api/database/sql/as', {
      headers: admin(),
      body: { query: 'select public.pwn() as ok', userId: null },
    });
    expect(r.status).toBe(200);
    expect(await superuser()).toBe(false);
  });

  it('a trigger on a table that cascades from auth.users, fired by deleting the user', async () => {
    const u = await createTestUser(t);
    await sql('create table public.owned (user_id uuid references auth.users (id) on delete cascade)');
    await sql(
      `create function public.gone() returns trigger language plpgsql as $$ begin perform public.pwn(); return null; end $$`,
    );
    await sql('create trigger gone after delete on public.owned for each row execute function public.gone()');
    await sql(
      `create constraint trigger gone_late after delete on public.owned deferrable initially deferred for each row execute function public.gone()`,
    );
    expect((await sql(`insert into public.owned values ('${u.userId}')`)).status).toBe(200);
    expect((await call(t, 'DELETE', `/api/auth/users/${u.userId}`, { headers: admin() })).status).toBeLessThan(300);
    expect((await sql('select count(*)::int as n from public.owned')).body.rows).toEqual([{ n: 0 }]);
    expect(await superuser()).toBe(false);
  });

  it('a policy evaluated by realtime for a subscriber (table changes and presence)', async () => {
    await sql('create table public.watched (id uuid primary key default gen_random_uuid(), body text)');
    await sql('alter table public.watched enable row level security');
    await sql('grant select on public.watched to authenticated');
    await sql('create policy trap on public.watched for select to authenticated using (public.pwn())');
    expect((await call(t, 'POST', '/api/database/tables/watched/realtime', { headers: admin() })).status).toBe(200);
    const [a, b] = [await createTestUser(t), await createTestUser(t)];
    const [sa, sb] = [await connectSocket(t.url, a.token), await connectSocket(t.url, b.token)];
    open.push(sa, sb);
    const inbox = new Inbox(sa);
    expect(await subscribe(sa, 'table:watched')).toMatchObject({ ok: true });
    const got = inbox.next('INSERT');
    expect((await sql(`insert into public.watched (body) values ('hi')`)).status).toBe(200);
    expect(await got).toMatchObject({ type: 'INSERT', record: { body: 'hi' } });
    expect(await superuser()).toBe(false);
    // Presence: who else is on a channel is decided by the viewers' policies on realtime.messages.
    await sql(`insert into realtime.channels (pattern, presence) values ('trap:%', true)`);
    await sql('create policy trap on realtime.messages for select to authenticated using (public.pwn())');
    expect(await subscribe(sa, 'trap:1')).toMatchObject({ ok: true });
    const ack = await subscribe(sb, 'trap:1');
    expect(ack.ok).toBe(true);
    expect(ack.presence.members.map((m: { userId: string }) => m.userId).sort()).toEqual([a.userId, b.userId].sort());
    expect(await superuser()).toBe(false);
  });

  it("a Plinth migration: no name resolves in the owner's schema, nor in a schema the owner made first", async () => {
    // CVE-2018-1058's shape: upper(name) in public matches current_user exactly, pg_catalog's upper(text) does not.
    expect(
      (
        await sql(
          `create function public.upper(name) returns text language plpgsql as $$ begin perform public.pwn(); return 'x'; end $$`,
        )
      ).status,
    ).toBe(200);
    const probe = { id: '9990', name: 'probe', sql: 'do $$ begin perform upper(current_user); end $$;' };
    expect(await migrate(t.deps.db, [...readMigrations(), probe])).toEqual(['9990']);
    expect(await superuser()).toBe(false);
    expect((await sql('create schema plinth_future')).status).toBe(200);
    const future = {
      id: '9991',
      name: 'future',
      sql: 'create schema if not exists plinth_future; create table plinth_future.t (a int);',
    };
    await expect(migrate(t.deps.db, [...readMigrations(), future])).rejects.toThrow(
      /creates schema "plinth_future", which exists and belongs to role "plinth_owner_/,
    );
  });

  it("Plinth's own queries: an operator or function the owner plants in public is never picked", async () => {
    // CVE-2018-1058's shape at run time: `relnamespace = 'public'::regnamespace` matches an
    // operator on (oid, regnamespace) exactly, pg_catalog's =(oid, oid) does not; so does a
    // plain function call on a name. Plinth's own connection resolves names in pg_catalog only.
    const planted = await sql(`
      create function public.pwn_eq(oid, regnamespace) returns boolean language plpgsql as $$ begin perform public.pwn(); return $1 = $2::oid; end $$;
      create operator public.= (leftarg = oid, rightarg = regnamespace, function = public.pwn_eq);
      create function public.pwn_eq(name, name) returns boolean language plpgsql as $$ begin perform public.pwn(); return $1::text = $2::text; end $$;
      create operator public.= (leftarg = name, rightarg = name, function = public.pwn_eq);
      create function public.format_type(oid, integer) returns text language plpgsql as $$ begin perform public.pwn(); return 'x'; end $$;
      create table public.probe (id int primary key, note text)`);
    expect(planted.status).toBe(200);
    // The operator works for the owner's own queries, so a superuser resolving it would fire it.
    expect(
      (await sql(`select count(*)::int as n from pg_class where relnamespace = 'public'::regnamespace`)).status,
    ).toBe(200);
    expect(existsSync(marker)).toBe(false);
    for (const [method, url] of [
      ['POST', '/api/advisor/scan'],
      ['GET', '/api/metadata'],
      ['GET', '/api/database/tables'],
      ['GET', '/api/database/tables/probe/schema'],
      ['GET', '/api/database/types/typescript'],
      ['GET', '/api/db/probe?select=id'],
    ] as const) {
      const r = await call(t, method, url, { headers: admin() });
      expect(await superuser(), url).toBe(false);
      expect(r.status, `${url}: ${JSON.stringify(r.body)}`).toBeLessThan(500);
    }
  });

  it('the owner reads system.user_migrations but cannot write it; the migrations API still records', async () => {
    const forged = await sql(
      `insert into system.user_migrations (version, name, checksum, statements) values ('1', 'forged', 'abc', 1)`,
    );
    expect(forged.status).toBe(403);
    const byFunction = await sql(
      `select * from system.record_user_migration('1', 'forged', 'abc', 1, repeat('0', 64))`,
    );
    expect([byFunction.status, byFunction.body.message]).toEqual([
      403,
      expect.stringContaining('not a migration applied by POST /api/database/migrations'),
    ]);
    const applied = await call(t, 'POST', '/api/database/migrations', {
      headers: admin(),
      body: { version: '2', name: 'real', sql: 'create table public.from_migration (a int);' },
    });
    expect(applied.status).toBe(201);
    const listed = await call(t, 'GET', '/api/database/migrations', { headers: admin() });
    expect(listed.body.migrations).toEqual([expect.objectContaining({ version: '2', name: 'real', statements: 1 })]);
    expect((await sql('select version from system.user_migrations')).body.rows).toEqual([{ version: '2' }]);
  });
});
