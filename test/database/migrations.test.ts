import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { call } from '../helpers/http.js';
import { admin, anon, envelope, sql } from './helpers.js';

describe.each(backends())('migrations API (%s)', (backend) => {
  let t: TestApp;
  const post = (path: string, body: unknown) => call(t, 'POST', path, { headers: admin(t), body });
  const dry = async (q: string, extra: Record<string, string> = {}) => {
    const r = await post('/api/database/migrations/dry-run', { sql: q, ...extra });
    expect(r.status, r.text).toBe(200);
    return r.body as {
      riskLevel: string;
      reasons: string[];
      statements: Array<{ kind: string; riskLevel: string; sql: string }>;
      status: string | null;
    };
  };
  beforeAll(async () => {
    t = await startApp(backend);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('applies a migration in one transaction as the owner role and lists it with its checksum', async () => {
    const r = await post('/api/database/migrations', {
      version: '20260101000000',
      name: 'create_posts',
      sql: `create table public.posts (id bigint generated always as identity primary key, title text not null);
            grant select, insert on public.posts to anon, authenticated;
            insert into public.posts (title) values ('first');`,
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body.migration).toMatchObject({
      version: '20260101000000',
      name: 'create_posts',
      statements: 3,
      checksum: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const owner = await sql(t, `select tableowner from pg_tables where tablename = 'posts'`);
    expect(owner.rows[0].tableowner).toMatch(/^plinth_owner_/);
    const list = await call(t, 'GET', '/api/database/migrations', { headers: admin(t) });
    expect(list.body.migrations.map((m: any) => m.version)).toEqual(['20260101000000']);
    const rows = await call(t, 'GET', '/api/database/records/posts', { headers: anon(t) });
    expect(rows.body.map((x: any) => x.title)).toEqual(['first']);
  });

  it('answers 409 for a version applied again, and reports drift when its SQL changed', async () => {
    const same = await post('/api/database/migrations', {
      version: '20260101000000',
      name: 'create_posts',
      sql: 'select 1',
    });
    expect(same.status).toBe(409);
    expect(envelope(same).error).toBe('MIGRATION_DRIFT');
    const original = `create table public.tags (name text primary key);`;
    expect(
      (await post('/api/database/migrations', { version: '20260102000000', name: 'tags', sql: original })).status,
    ).toBe(201);
    const again = await post('/api/database/migrations', { version: '20260102000000', name: 'tags', sql: original });
    expect([again.status, envelope(again).error]).toEqual([409, 'MIGRATION_APPLIED']);
    expect((await dry(original, { version: '20260102000000' })).status).toBe('applied');
    expect((await dry(`${original} -- edited`, { version: '20260102000000' })).status).toBe('drift');
    expect((await dry(original, { version: '20260103000000' })).status).toBe('pending');
  });

  it('rolls a failing migration back whole and records nothing', async () => {
    const r = await post('/api/database/migrations', {
      version: '20260104000000',
      name: 'broken',
      sql: 'create table public.half (id int);\ninsert into public.nope values (1);',
    });
    expect(r.status).toBe(400);
    expect(envelope(r).error).toBe('SQL_ERROR');
    expect(r.body.message).toContain('42P01');
    expect((await sql(t, `select to_regclass('public.half') as t`)).rows[0].t).toBeNull();
    const list = await call(t, 'GET', '/api/database/migrations', { headers: admin(t) });
    expect(list.body.migrations.map((m: any) => m.version)).not.toContain('20260104000000');
  });

  it('refuses transaction control, superuser commands and bad input with the envelope', async () => {
    const begin = await post('/api/database/migrations', {
      version: '20260105000000',
      name: 'tx',
      sql: 'begin; create table public.x (id int); commit;',
    });
    expect([begin.status, envelope(begin).error]).toEqual([400, 'INVALID_INPUT']);
    const program = await post('/api/database/migrations', {
      version: '20260105000000',
      name: 'evil',
      sql: `copy (select 1) to program 'id'`,
    });
    expect([program.status, envelope(program).error]).toEqual([403, 'SQL_NOT_PERMITTED']);
    for (const body of [
      { version: 'v1', name: 'x', sql: 'select 1' },
      { version: '1', name: 'a b', sql: 'select 1' },
      { version: '1', name: 'x' },
    ]) {
      const r = await post('/api/database/migrations', body);
      expect(r.status).toBe(400);
      envelope(r);
    }
    const syntax = await post('/api/database/migrations/dry-run', { sql: 'select 1;\ncreate tabel x (id int);' });
    expect(syntax.status).toBe(400);
    expect(envelope(syntax).message).toContain('line 2, column 8');
    expect((await call(t, 'GET', '/api/database/migrations', { headers: anon(t) })).status).toBe(403);
    expect((await call(t, 'GET', '/api/database/migrations')).status).toBe(401);
  });

  it('dry-runs with the Postgres parser: statements, risk level and reasons, running nothing', async () => {
    await sql(t, 'create table public.small (id int primary key, a int, b text)');
    const safe = await dry('create table public.never (id int); create index on public.small (a)');
    expect(safe.riskLevel).toBe('SAFE');
    expect(safe.statements.map((s) => s.kind)).toEqual(['CreateStmt', 'IndexStmt']);
    expect((await sql(t, `select to_regclass('public.never') as t`)).rows[0].t).toBeNull();
    const cases: Array<[string, string, RegExp]> = [
      ['drop table public.small', 'DANGER', /drops table/],
      ['truncate public.small', 'DANGER', /truncates/],
      ['delete from public.small', 'DANGER', /DELETE without WHERE/],
      ['update public.small set a = 1', 'DANGER', /UPDATE without WHERE/],
      ['alter table public.small drop column b', 'DANGER', /drops column/],
      ['alter table public.small alter column a type bigint', 'WARNING', /type of .*rewritten/],
      ['alter table public.small rename column a to c', 'WARNING', /renames/],
      ['drop policy if exists p on public.small', 'WARNING', /drops policy/],
      ['delete from public.small where id = 1; update public.small set a = 2 where id = 1', 'SAFE', /^$/],
    ];
    for (const [q, level, why] of cases) {
      const d = await dry(q);
      expect([q, d.riskLevel]).toEqual([q, level]);
      expect(d.reasons.join(' ')).toMatch(why);
    }
  });

  it('calls a type change on a big table DANGER', async () => {
    await sql(t, 'create table public.big (id int primary key, a int)');
    await sql(t, 'insert into public.big select g, g from generate_series(1, 100000) g');
    await sql(t, 'analyze public.big');
    const d = await dry('alter table public.big alter column a type bigint');
    expect(d.riskLevel).toBe('DANGER');
    expect(d.reasons[0]).toMatch(/big \(~100000 rows/);
  });

  it('keeps tables made with /api/database/tables working beside migrations', async () => {
    const c = await post('/api/database/tables', {
      tableName: 'notes',
      columns: [{ name: 'body', type: 'string', nullable: false }],
    });
    expect(c.status).toBe(201);
    const m = await post('/api/database/migrations', {
      version: '20260106000000',
      name: 'notes_tag',
      sql: 'alter table public.notes add column tag text',
    });
    expect(m.status, m.text).toBe(201);
    const w = await call(t, 'POST', '/api/database/records/notes', {
      headers: admin(t),
      body: [{ body: 'x', tag: 'y' }],
    });
    expect(w.status, w.text).toBe(201);
    const s = await call(t, 'GET', '/api/database/tables/notes/schema', { headers: admin(t) });
    expect(s.body.columns.map((x: any) => x.name)).toContain('tag');
  });
});
