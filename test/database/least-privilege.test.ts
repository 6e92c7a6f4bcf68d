import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser, serve, startApp, type TestApp } from '../helpers/app.js';
import { backends, freshDb } from '../helpers/db.js';
import { at, call } from '../helpers/http.js';
import { admin, envelope, sql } from './helpers.js';
import { loadConfig } from '../../src/config/index.js';
import { buildDeps } from '../../src/deps.js';
import { migrate, readMigrations } from '../../src/db/migrate.js';
import { newAdminKey } from '../../src/auth/credentials.js';

describe.each(backends())('admin SQL runs as the owner role, not a superuser (%s)', (backend) => {
  let t: TestApp;
  const marker = path.join(tmpdir(), `plinth-lp-${process.pid}-${Date.now()}`);
  beforeAll(async () => {
    t = await startApp(backend);
  });
  afterAll(async () => {
    await t?.close();
    rmSync(marker, { force: true });
  });

  it('is a login role that is not a superuser', async () => {
    const r = await sql(
      t,
      `select current_user as u, session_user as s, (select rolsuper from pg_roles where rolname = current_user) as su`,
    );
    expect(r.rows[0].u).toMatch(/^plinth_owner_[0-9a-f]{12}$/);
    expect(r.rows[0].s).toBe(r.rows[0].u);
    expect(r.rows[0].su).toBe(false);
  });

  const forbidden: Array<[string, string]> = [
    ['COPY ... TO PROGRAM', `copy (select 1) to program 'id > ${marker}'`],
    ['COPY ... FROM a server file', `copy pg_temp_x from '/etc/passwd'`],
    ['COPY ... TO a server file', `copy (select 1) to '${marker}'`],
    ['pg_read_file', `select pg_read_file('/etc/passwd')`],
    ['pg_ls_dir', `select pg_ls_dir('.')`],
    ['lo_import', `select lo_import('/etc/passwd')`],
    ['ALTER SYSTEM', `alter system set log_statement = 'all'`],
    ['a superuser-only setting', `set log_statement = 'all'`],
    ['CREATE ROLE', `create role attacker login superuser`],
    ['ALTER ROLE', `alter role anon superuser`],
    ['SET ROLE to a superuser', `set role postgres`],
    ['SET SESSION AUTHORIZATION', `set session authorization postgres`],
    ['reading Plinth credentials', `select value from system.credentials`],
    ['reading password hashes', `select password_hash from auth.users`],
    ['an extension off the allow-list', `select system.create_extension('adminpack')`],
    ['an untrusted extension directly', `create extension if not exists plpython3u`],
  ];
  it.each(forbidden)('refuses %s with 403 SQL_NOT_PERMITTED', async (_what, query) => {
    if (query.startsWith('copy pg_temp_x')) await sql(t, 'create table if not exists public.pg_temp_x (line text)');
    const r = await call(t, 'POST', '/api/database/sql', { headers: admin(t), body: { query } });
    const e = envelope(r);
    // An untrusted extension whose files are not installed fails before the privilege check.
    if (query.includes('plpython3u') && r.status === 400)
      return expect(e.message).toMatch(/not available|could not open/);
    // ALTER SYSTEM cannot run in the endpoint's transaction at all (25001), before any privilege check.
    if (query.startsWith('alter system'))
      return expect([r.status, e.message]).toEqual([400, expect.stringContaining('25001')]);
    expect(r.status).toBe(403);
    expect(e.error).toBe('SQL_NOT_PERMITTED');
    expect(e.nextActions).toContain('system.create_extension');
    expect(existsSync(marker)).toBe(false);
  });

  it('creates tables, policies, functions, triggers and trusted extensions', async () => {
    await sql(
      t,
      `create table public.lp_items (id serial primary key, owner uuid default auth.uid(), label text, updated_at timestamptz)`,
    );
    await sql(t, `alter table public.lp_items enable row level security`);
    await sql(
      t,
      `create policy lp_own on public.lp_items for all to authenticated using (owner = (select auth.uid())) with check (owner = (select auth.uid()))`,
    );
    await sql(t, `grant select, insert on public.lp_items to authenticated`);
    await sql(t, `grant usage on sequence public.lp_items_id_seq to authenticated`);
    await sql(
      t,
      `create function public.lp_touch() returns trigger language plpgsql as $$ begin new.updated_at := now(); return new; end $$`,
    );
    await sql(
      t,
      `create trigger lp_touch before insert or update on public.lp_items for each row execute function public.lp_touch()`,
    );
    await sql(t, `create extension if not exists pgcrypto`);
    expect((await sql(t, `select system.create_extension('citext') as e`)).rows[0].e).toBe('citext');
    const u = await createTestUser(t);
    const w = await call(t, 'POST', '/api/database/records/lp_items', {
      headers: { ...u.auth, prefer: 'return=representation' },
      body: [{ label: 'mine' }],
    });
    expect(w.status, w.text).toBe(201);
    expect(w.body[0].updated_at).not.toBeNull();
    const mine = await call(t, 'GET', '/api/database/records/lp_items', { headers: u.auth });
    expect(mine.body.map((x: any) => x.label)).toEqual(['mine']);
  });

  it('keeps tables made through /api/database/tables working for admins and users', async () => {
    const c = await call(t, 'POST', '/api/database/tables', {
      headers: admin(t),
      body: { tableName: 'lp_api', columns: [{ name: 'title', type: 'string', nullable: false }] },
    });
    expect(c.status).toBe(201);
    const owner = await sql(t, `select tableowner from pg_tables where tablename = 'lp_api'`);
    expect(owner.rows[0].tableowner).toMatch(/^plinth_owner_/);
    const w = await call(t, 'POST', '/api/database/records/lp_api', { headers: admin(t), body: [{ title: 'x' }] });
    expect(w.status).toBe(201);
  });
});

describe.each(backends())('upgrading a database made before the owner role (%s)', (backend) => {
  it('moves ownership of existing objects; data and policies keep working', async () => {
    const { db, drop } = await freshDb(backend);
    const dataDir = mkdtempSync(path.join(tmpdir(), 'plinth-lp-up-'));
    const adminKey = newAdminKey();
    let deps: Awaited<ReturnType<typeof buildDeps>> | undefined;
    let app: Awaited<ReturnType<typeof serve>>['app'] | undefined;
    try {
      await migrate(
        db,
        readMigrations().filter((m) => m.id < '0140'),
      );
      await db.exec(`
        create table public.old_notes (id serial primary key, owner uuid not null, body text not null);
        alter table public.old_notes enable row level security;
        create policy old_own on public.old_notes for select to authenticated using (owner = auth.uid());
        grant select on public.old_notes to authenticated;
        create function public.old_count() returns bigint language sql as 'select count(*) from public.old_notes';`);
      const config = loadConfig({
        DATA_DIR: dataDir,
        LOG_LEVEL: 'silent',
        RATE_LIMIT_PLAN: 'off',
        ADMIN_API_KEY: adminKey,
        HOST: '127.0.0.1',
        PORT: '0',
      });
      deps = await buildDeps(config, { db, engine: backend });
      const served = await serve(deps);
      app = served.app;
      const t = {
        url: served.url,
        adminKey,
        deps,
        fetch: at(served.url).fetch,
      } as unknown as TestApp;
      const u = await createTestUser(t);
      await db.query(`insert into public.old_notes (owner, body) values ($1, 'kept'), (gen_random_uuid(), 'other')`, [
        u.userId,
      ]);
      const owners = await sql(t, `select tableowner from pg_tables where tablename = 'old_notes'`);
      expect(owners.rows[0].tableowner).toMatch(/^plinth_owner_/);
      await sql(t, `alter table public.old_notes add column tag text`);
      await sql(
        t,
        `create or replace function public.old_count() returns bigint language sql as 'select count(*) + 0 from public.old_notes'`,
      );
      const mine = await call(t, 'GET', '/api/database/records/old_notes', { headers: u.auth });
      expect(mine.status).toBe(200);
      expect(mine.body.map((x: any) => x.body)).toEqual(['kept']);
    } finally {
      await app?.close();
      if (deps) await deps.close();
      else await db.close();
      await drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
