// PGlite as an explicit choice (DATABASE_URL=pglite://) and the one-time carry-over of a
// PGlite DATA_DIR (the default of the previous release) into the embedded Postgres.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConfiguredApp, type ConfiguredApp } from '../helpers/configured-app.js';

describe('PGlite on request, and carrying a PGlite DATA_DIR over to the embedded Postgres', () => {
  let dataDir: string;
  let t: ConfiguredApp | null = null;
  let adminKey: string;
  let anonKey: string;
  const password = 'correct horse battery';
  const email = 'ada@example.com';
  const admin = () => ({ 'x-api-key': adminKey, 'content-type': 'application/json' });
  const sql = async (query: string) => {
    const r = await t!.fetch('/api/database/sql', {
      method: 'POST',
      headers: admin(),
      body: JSON.stringify({ query }),
    });
    if (r.status !== 200) throw new Error(`SQL failed (${r.status}): ${await r.text()}`);
    return (await r.json()) as { rows: any[] };
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'plinth-carry-'));
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('DATABASE_URL=pglite:// runs on PGlite in DATA_DIR/pglite; data made there through the API', async () => {
    t = await startConfiguredApp({ DATA_DIR: dataDir, DATABASE_URL: 'pglite://' });
    adminKey = t.deps.generatedAdminKey!;
    anonKey = t.deps.credentials.anonKey;
    expect(adminKey).toMatch(/^ik_/);
    expect((await (await t.fetch('/api/health?checks=true')).json()).checks.database).toEqual({
      status: 'ok',
      engine: 'pglite',
    });
    expect(existsSync(path.join(dataDir, 'pglite', 'PG_VERSION'))).toBe(true);

    await sql(`create table public.notes (id serial primary key, body text not null, public boolean not null default false);
      alter table public.notes enable row level security;
      grant select on public.notes to anon, authenticated;
      create policy notes_public on public.notes for select to anon, authenticated using (public);
      insert into public.notes (body, public) values ('hello ünïcode', true), ('secret', false), ('third', true);
      create function public.add_one(x int) returns int language sql immutable as 'select x + 1';`);
    const signup = await t.fetch('/api/auth/signup', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    expect(signup.status).toBe(200);
    const fn = await t.fetch('/api/functions', {
      method: 'POST',
      headers: admin(),
      body: JSON.stringify({ name: 'hello', code: 'export default () => new Response("hi")' }),
    });
    expect(fn.status).toBe(201);
    expect(
      (
        await t.fetch('/api/secrets/GREETING', {
          method: 'PUT',
          headers: admin(),
          body: JSON.stringify({ value: 'hi there' }),
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await t.fetch('/api/storage/buckets', {
          method: 'POST',
          headers: admin(),
          body: JSON.stringify({ bucketName: 'docs', isPublic: true }),
        })
      ).status,
    ).toBe(201);
    const fd = new FormData();
    fd.append('file', new Blob(['file body'], { type: 'text/plain' }), 'a.txt');
    const up = await t.fetch('/api/storage/buckets/docs/objects/a.txt', {
      method: 'PUT',
      headers: { 'x-api-key': adminKey },
      body: fd,
    });
    expect(up.status).toBe(200);
    await t.close();
    t = null;
  });

  it('the next start without DATABASE_URL carries everything over once and keeps the old dir', async () => {
    t = await startConfiguredApp({ DATA_DIR: dataDir });
    expect((await (await t.fetch('/api/health?checks=true')).json()).checks.database).toEqual({
      status: 'ok',
      engine: 'embedded',
    });
    const entries = readdirSync(dataDir);
    expect(entries).toContain('postgres');
    expect(entries).not.toContain('pglite');
    expect(entries.filter((e) => /^pglite\.migrated-\d{4}-/.test(e))).toHaveLength(1);

    // Keys: the admin key printed by the PGlite release still works; the anon key is the same.
    expect(t.deps.generatedAdminKey).toBeNull();
    expect(t.deps.credentials.anonKey).toBe(anonKey);
    // Tables and rows, with RLS still applying to the anon key.
    expect((await sql('select body from public.notes order by id')).rows.map((r) => r.body)).toEqual([
      'hello ünïcode',
      'secret',
      'third',
    ]);
    const asAnon = await t.fetch('/api/database/records/notes?order=id.asc', { headers: { apikey: anonKey } });
    expect(asAnon.status).toBe(200);
    expect((await asAnon.json()).map((r: any) => r.body)).toEqual(['hello ünïcode', 'third']);
    expect((await sql('select public.add_one(41) as v')).rows).toEqual([{ v: 42 }]);
    // Sequences continue after the carried rows.
    expect((await sql(`insert into public.notes (body) values ('new') returning id`)).rows).toEqual([{ id: 4 }]);
    // Users sign in with their password.
    const signin = await t.fetch('/api/auth/signin', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    expect(signin.status).toBe(200);
    // Functions, secrets, storage metadata (the bytes stay in DATA_DIR/storage).
    expect((await t.fetch('/api/functions/hello', { headers: admin() })).status).toBe(200);
    const secrets = await (await t.fetch('/api/secrets', { headers: admin() })).json();
    expect(secrets.map((s: any) => s.name)).toEqual(['GREETING']);
    const file = await t.fetch('/api/storage/buckets/docs/objects/a.txt');
    expect(file.status).toBe(200);
    expect(await file.text()).toBe('file body');
    const roles = await sql(`select rolname from pg_roles where rolname in ('anon', 'authenticated') order by 1`);
    expect(roles.rows.map((r) => r.rolname)).toEqual(['anon', 'authenticated']);
    await t.close();

    // Once only: a further start uses the cluster and does not look at the migrated dir again.
    t = await startConfiguredApp({ DATA_DIR: dataDir });
    expect((await sql('select count(*)::int as n from public.notes')).rows).toEqual([{ n: 4 }]);
  });
});
