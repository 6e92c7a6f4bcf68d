// PostgREST semantics the records API must keep exactly (found by a sweep against the docs and
// PostgREST's behaviour): column names that match the SQL's own aliases, and upserts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { call } from '../helpers/http.js';
import { admin, anon, envelope, sql } from './helpers.js';

describe.each(backends())('records API semantics (%s)', (backend) => {
  let t: TestApp;
  const h = () => admin(t);
  const represent = () => ({ ...h(), prefer: 'return=representation' });

  beforeAll(async () => {
    t = await startApp(backend);
    for (const body of [
      // r, w and page are names the generated SQL uses for itself.
      {
        tableName: 'aliases',
        rlsEnabled: false,
        columns: ['r', 'w', 'page'].map((name) => ({ name, type: 'string', nullable: true })),
      },
      {
        tableName: 'codes',
        rlsEnabled: false,
        columns: [
          { name: 'k', type: 'integer', nullable: false, unique: true },
          { name: 's', type: 'string', nullable: true },
        ],
      },
      {
        tableName: 'times',
        rlsEnabled: false,
        columns: [
          { name: 'at', type: 'datetime', nullable: true },
          { name: 'day', type: 'date', nullable: true },
        ],
      },
    ]) {
      expect((await call(t, 'POST', '/api/database/tables', { headers: h(), body })).status).toBe(201);
    }
    await sql(
      t,
      'create function public.all_aliases() returns setof public.aliases language sql stable as $$ select * from public.aliases $$',
    );
  });
  afterAll(() => t?.close());

  it('returns whole rows when columns are named r, w or page (reads, writes, RPC)', async () => {
    const row = { r: 'rv', w: 'wv', page: 'pv' };
    let r = await call(t, 'POST', '/api/db/aliases', { headers: represent(), body: row });
    expect(r.status).toBe(201);
    expect(r.body).toEqual([expect.objectContaining(row)]);
    r = await call(t, 'GET', '/api/db/aliases', { headers: h() });
    expect(r.body).toEqual([expect.objectContaining(row)]);
    r = await call(t, 'GET', '/api/database/records/aliases?select=r,w', { headers: h() });
    expect(r.body).toEqual([{ r: 'rv', w: 'wv' }]);
    r = await call(t, 'PATCH', '/api/db/aliases?r=eq.rv', { headers: represent(), body: { w: 'w2' } });
    expect(r.body).toEqual([expect.objectContaining({ r: 'rv', w: 'w2', page: 'pv' })]);
    r = await call(t, 'POST', '/api/db/rpc/all_aliases', { headers: h(), body: {} });
    expect(r.body).toEqual([expect.objectContaining({ r: 'rv', w: 'w2', page: 'pv' })]);
    r = await call(t, 'DELETE', '/api/db/aliases?r=eq.rv', { headers: represent() });
    expect(r.body).toEqual([expect.objectContaining({ r: 'rv', w: 'w2' })]);
  });

  it('on_conflict without Prefer: resolution is a plain insert: a conflict is 409 and changes nothing', async () => {
    expect((await call(t, 'POST', '/api/db/codes', { headers: h(), body: { k: 1, s: 'first' } })).status).toBe(201);
    const r = await call(t, 'POST', '/api/db/codes?on_conflict=k', {
      headers: represent(),
      body: { k: 1, s: 'second' },
    });
    expect(r.status).toBe(409);
    expect(envelope(r).error).toBe('ALREADY_EXISTS');
    expect((await call(t, 'GET', '/api/db/codes?k=eq.1&select=s', { headers: h() })).body).toEqual([{ s: 'first' }]);
  });

  it('a merge-duplicates upsert that sends only the conflict columns returns the row', async () => {
    await call(t, 'POST', '/api/db/codes', { headers: h(), body: { k: 2, s: 'kept' } });
    const r = await call(t, 'POST', '/api/db/codes?on_conflict=k&select=k,s', {
      headers: { ...h(), prefer: 'resolution=merge-duplicates,return=representation' },
      body: { k: 2 },
    });
    expect(r.status).toBe(200); // PostgREST: an upsert that inserted no row is 200 (on /api/db)
    expect(r.body).toEqual([{ k: 2, s: 'kept' }]);
  });

  it('takes every ISO 8601 offset Postgres takes (+02 too), and refuses days that do not exist with INVALID_VALUE', async () => {
    let r = await call(t, 'POST', '/api/db/times', {
      headers: represent(),
      body: { at: '2024-03-10T12:00:00+02', day: '2024-02-29' },
    });
    expect(r.status).toBe(201);
    expect(Date.parse(r.body[0].at)).toBe(Date.parse('2024-03-10T10:00:00Z'));
    r = await call(t, 'GET', '/api/db/times?at=eq.2024-03-10T12:00:00%2B02', { headers: h() });
    expect(r.body).toHaveLength(1);
    for (const [body, column] of [
      [{ at: '2024-02-30T00:00:00Z' }, 'at'],
      [{ at: '2024-03-10T24:00:00Z' }, 'at'],
      [{ day: '2023-02-29' }, 'day'],
    ] as const) {
      r = await call(t, 'POST', '/api/db/times', { headers: h(), body });
      expect(r.status).toBe(400);
      expect(envelope(r)).toMatchObject({ error: 'INVALID_VALUE', message: expect.stringContaining(`"${column}"`) });
    }
    expect((await call(t, 'GET', '/api/db/times', { headers: h() })).body).toHaveLength(1);
  });

  // A plain write's commit is sent behind its statement (src/database/write-checks.ts): the
  // answer must still wait for that commit, and a commit that fails must be the answer.
  it('a write answers after its commit: a commit that fails (a deferred unique) is a 409 and keeps nothing', async () => {
    await sql(
      t,
      'create table public.deferred (k int, constraint deferred_k_once unique (k) deferrable initially deferred)',
    );
    await sql(t, 'grant select, insert on public.deferred to anon');
    const rows = async () => (await sql(t, 'select count(*)::int as n from public.deferred')).rows[0].n;
    for (const [who, headers] of [
      ['admin', h()],
      ['anon', anon(t)],
    ] as const) {
      await sql(t, 'delete from public.deferred');
      const ok = await call(t, 'POST', '/api/database/records/deferred', { headers, body: [{ k: 1 }] });
      expect(ok.status, who).toBe(201);
      expect(await rows(), who).toBe(1); // committed before the answer, seen by another connection
      const dup = await call(t, 'POST', '/api/database/records/deferred', { headers, body: [{ k: 2 }, { k: 2 }] });
      expect(dup.status, who).toBe(409);
      expect(envelope(dup).error, who).toBe('ALREADY_EXISTS');
      expect(await rows(), who).toBe(1);
      // The connection that committed nothing is fine for the next write.
      expect((await call(t, 'POST', '/api/database/records/deferred', { headers, body: [{ k: 3 }] })).status, who).toBe(
        201,
      );
      expect(await rows(), who).toBe(2);
    }
  });
});
