// GET /api/metadata and GET /api/metadata/{table}: the backend in one call, in the shape
// @insforge/mcp's get-backend-metadata and get-table-schema read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { call } from '../helpers/http.js';
import { admin, anon, envelope, sql } from '../database/helpers.js';

describe.each(backends())('metadata (%s)', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp(backend);
    const h = { ...admin(t) };
    expect(
      (
        await call(t, 'POST', '/api/database/tables', {
          headers: h,
          body: {
            tableName: 'authors',
            rlsEnabled: true,
            columns: [{ name: 'name', type: 'string', nullable: false, unique: true }],
          },
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await call(t, 'POST', '/api/database/tables', {
          headers: h,
          body: {
            tableName: 'books',
            columns: [
              { name: 'title', type: 'string', nullable: false },
              {
                name: 'author_id',
                type: 'uuid',
                nullable: true,
                foreignKey: { table: 'authors', column: 'id', onDelete: 'CASCADE' },
              },
            ],
          },
        })
      ).status,
    ).toBe(201);
    await sql(t, `create policy read_all on public.authors for select to anon, authenticated using (true)`);
    await sql(t, `create index books_title_idx on public.books (title)`);
    await sql(t, `insert into public.authors (name) select 'a' || g from generate_series(1, 50) g`);
    await sql(t, `analyze public.authors`);
    expect((await call(t, 'POST', '/api/database/tables/books/realtime', { headers: h })).status).toBeLessThan(300);
    expect(
      (await call(t, 'POST', '/api/storage/buckets', { headers: h, body: { bucketName: 'media', isPublic: false } }))
        .status,
    ).toBe(201);
    for (const key of ['a.txt', 'b.txt']) {
      const r = await call(t, 'PUT', `/api/storage/buckets/media/objects/${key}`, {
        headers: { ...h, 'content-type': 'text/plain' },
        raw: 'hello',
      });
      expect(r.status, r.text).toBeLessThan(300);
    }
    await sql(t, `insert into realtime.channels (pattern, description) values ('chat:%', 'rooms')`);
    await sql(
      t,
      `create policy chat_read on realtime.messages for select to authenticated using (channel like 'chat:%')`,
    );
  });
  afterAll(async () => {
    await t?.close();
  });

  it('gives version, auth, database, storage, functions and realtime in one call', async () => {
    const r = await call(t, 'GET', '/api/metadata?mcp=true', { headers: admin(t) });
    expect(r.status, r.text).toBe(200);
    const m = r.body;
    expect(m.version).toBe(t.deps.version);
    expect(m.auth).toMatchObject({
      oAuthProviders: [],
      customOAuthProviders: [],
      requireEmailVerification: false,
      passwordMinLength: 8,
    });
    expect(typeof m.database.totalSizeInGB).toBe('number');
    const authors = m.database.tables.find((x: any) => x.tableName === 'authors');
    expect([authors.rlsEnabled, authors.realtime, authors.primaryKey]).toEqual([true, false, ['id']]);
    expect(authors.recordCount, JSON.stringify(authors)).toBe(50);
    expect(authors.policies).toEqual([
      {
        policyName: 'read_all',
        command: 'SELECT',
        permissive: true,
        roles: ['anon', 'authenticated'],
        using: 'true',
        withCheck: null,
      },
    ]);
    const books = m.database.tables.find((x: any) => x.tableName === 'books');
    expect(books.realtime).toBe(true);
    expect(books.foreignKeys).toEqual([
      expect.objectContaining({
        columns: ['author_id'],
        referencedTable: 'authors',
        referencedColumns: ['id'],
        onDelete: 'CASCADE',
      }),
    ]);
    expect(books.indexes.map((i: any) => i.name)).toContain('books_title_idx');
    expect(books.columns.find((c: any) => c.columnName === 'title')).toEqual({
      columnName: 'title',
      type: 'text',
      isNullable: false,
      defaultValue: null,
    });
    expect(m.storage.buckets).toEqual([
      { name: 'media', public: false, createdAt: expect.any(String), objectCount: 2, sizeBytes: 10 },
    ]);
    expect(typeof m.storage.totalSizeInGB).toBe('number');
    expect(m.functions).toEqual([]);
    expect(m.realtime.channels).toEqual([
      expect.objectContaining({ pattern: 'chat:%', description: 'rooms', enabled: true }),
    ]);
    expect(m.realtime.permissions.subscribe.policies.map((p: any) => p.policyName)).toEqual(['chat_read']);
    expect(m.realtime.permissions.publish.policies).toEqual([]);
    expect(m.realtime.tables).toEqual(['books']);
  });

  it('describes one table, 404s an unknown one, and is for admins only', async () => {
    const r = await call(t, 'GET', '/api/metadata/books', { headers: admin(t) });
    expect(r.status).toBe(200);
    expect(r.body.tableName).toBe('books');
    expect(r.body.constraints.map((c: any) => c.type)).toContain('PRIMARY KEY');
    for (const name of ['nope', 'bad%20name', "x';drop"]) {
      const miss = await call(t, 'GET', `/api/metadata/${name}`, { headers: admin(t) });
      expect([miss.status, envelope(miss).error]).toEqual([404, 'TABLE_NOT_FOUND']);
    }
    expect((await call(t, 'GET', '/api/metadata', { headers: anon(t) })).status).toBe(403);
    expect((await call(t, 'GET', '/api/metadata')).status).toBe(401);
  });
});
