import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { call } from '../helpers/http.js';
import { admin, sql } from './helpers.js';

type User = Awaited<ReturnType<typeof createTestUser>>;

// Reads are compiled once per query-string shape (src/database/read-cache.ts): a schema change
// must never leave a read running a statement compiled for the schema before it.
describe.each(backends())('compiled reads after a schema change (%s)', (backend) => {
  let t: TestApp;
  let u: User;
  beforeAll(async () => {
    t = await startApp(backend);
    u = await createTestUser(t);
    const r = await call(t, 'POST', '/api/database/tables', {
      headers: admin(t),
      body: {
        tableName: 'shapes',
        rlsEnabled: true,
        columns: [
          { name: 'owner', type: 'uuid', nullable: false, defaultValue: 'auth.uid()' },
          { name: 'n', type: 'integer', nullable: false },
          { name: 'label', type: 'string', nullable: false },
        ],
      },
    });
    expect(r.status).toBe(201);
    await sql(t, 'create policy own on public.shapes for all to authenticated using (owner = auth.uid())');
    const w = await call(t, 'POST', '/api/db/shapes', {
      headers: u.auth,
      body: [
        { n: 1, label: 'one' },
        { n: 2, label: 'two' },
      ],
    });
    expect(w.status).toBe(201);
  });
  afterAll(async () => {
    await t?.close();
  });

  const read = (query: string) => call(t, 'GET', `/api/db/shapes?${query}`, { headers: u.auth });

  it('compiles a shape again after DDL on this instance (a column changes type)', async () => {
    // The shape is compiled and kept, then served for another value.
    expect((await read('n=eq.1&select=label')).body).toEqual([{ label: 'one' }]);
    expect((await read('n=eq.2&select=label')).body).toEqual([{ label: 'two' }]);
    await sql(t, 'alter table public.shapes alter column n type text using n::text');
    // Compiled for an integer column, "x" would be a 400 (INVALID_VALUE); for text it is a value.
    const r = await read('n=eq.x&select=label');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual([]);
    expect((await read('n=eq.2&select=label')).body).toEqual([{ label: 'two' }]);
    await sql(t, 'alter table public.shapes alter column n type integer using n::integer');
  });

  it('compiles a shape again after DDL by another instance (seen as the error it causes)', async () => {
    expect((await read('n=eq.1&select=label')).body).toEqual([{ label: 'one' }]);
    // Another instance's DDL: this one's caches are not told.
    await t.deps.db.query('alter table public.shapes rename column label to title');
    const first = await read('n=eq.2&select=label');
    expect(first.status, JSON.stringify(first.body)).toBe(400);
    expect(first.body.error).toBe('UNKNOWN_COLUMN');
    const renamed = await read('n=eq.2&select=title');
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    expect(renamed.body).toEqual([{ title: 'two' }]);
    expect((await read('n=eq.1&select=label')).status).toBe(400);
    await sql(t, 'alter table public.shapes rename column title to label');
  });

  it('answers the same as a compile for values a cached shape refuses or takes', async () => {
    expect((await read('n=gte.1&order=n.desc&limit=1')).body).toEqual([expect.objectContaining({ n: 2 })]);
    const bad = await read('n=gte.one&order=n.desc&limit=1');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('INVALID_VALUE');
    expect((await read('n=gte.1&order=n.desc&limit=0')).status).toBe(400);
    expect((await read('label=like.*w*&limit=5')).body).toEqual([expect.objectContaining({ label: 'two' })]);
    expect((await read('label=like.o*&limit=5')).body).toEqual([expect.objectContaining({ label: 'one' })]);
  });
});
