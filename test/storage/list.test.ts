// GET /api/storage/buckets/{bucket}/list: the objects a caller may read (issue 25, item 15),
// with the read rules of a download: a public bucket's are anyone's; in a private one a
// user's own uploads, everything for admins; anon and no credential are refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { startStorageApp, type StorageTestApp } from './helpers.js';

describe.each(backends())('storage listing of readable objects (%s)', (backend) => {
  let t: StorageTestApp;
  let a: Record<string, string>;
  let b: Record<string, string>;
  const list = async (bucket: string, headers: Record<string, string>, query = '') => {
    const r = await t.fetch(`/api/storage/buckets/${bucket}/list${query}`, { headers });
    return { status: r.status, body: (await r.json()) as any };
  };
  const keys = (body: any) => body.objects.map((o: { key: string }) => o.key);

  beforeAll(async () => {
    t = await startStorageApp(backend, 'local');
    a = (await createTestUser(t)).auth;
    b = (await createTestUser(t)).auth;
    await t.createBucket('pub', true);
    await t.createBucket('priv', false);
    for (const bucket of ['pub', 'priv']) {
      for (const [key, headers] of [
        ['a/1.txt', a],
        ['a/2.txt', a],
        ['a/3.txt', a],
        ['b/1.txt', b],
        ['admin.txt', t.admin],
      ] as const) {
        expect((await t.upload(bucket, { key, data: key, headers })).status).toBe(200);
      }
    }
  });
  afterAll(async () => t?.close());

  it('private bucket: each user lists only their own uploads; admins list all', async () => {
    const mine = await list('priv', a);
    expect(mine.status).toBe(200);
    expect(keys(mine.body)).toEqual(['a/1.txt', 'a/2.txt', 'a/3.txt']);
    expect(mine.body.data).toEqual(mine.body.objects);
    expect(mine.body.pagination).toEqual({ offset: 0, limit: 100, total: 3 });
    expect(mine.body.objects[0]).toMatchObject({ bucket: 'priv', key: 'a/1.txt', size: 7 });
    expect(keys((await list('priv', b)).body)).toEqual(['b/1.txt']);
    expect(keys((await list('priv', t.admin)).body)).toEqual(['a/1.txt', 'a/2.txt', 'a/3.txt', 'admin.txt', 'b/1.txt']);
    // Every listed object is one the caller can download.
    for (const o of mine.body.objects)
      expect((await t.fetch(`/api/storage/buckets/priv/objects/${o.key}`, { headers: a })).status).toBe(200);
  });

  it('private bucket: anon is 403 and no credential 401, as for a download', async () => {
    const anon = await list('priv', { apikey: t.anonKey });
    expect(anon.status).toBe(403);
    expect(anon.body).toMatchObject({ statusCode: 403, error: 'FORBIDDEN', nextActions: expect.any(String) });
    expect((await list('priv', {})).status).toBe(401);
  });

  it('public bucket: anyone lists everything, with or without a credential', async () => {
    for (const headers of [{}, { apikey: t.anonKey }, a, t.admin]) {
      const r = await list('pub', headers);
      expect(r.status).toBe(200);
      expect(r.body.pagination.total).toBe(5);
    }
  });

  it('pages with limit and offset, filters by prefix and search; total counts what the caller may read', async () => {
    const p1 = await list('priv', a, '?limit=2');
    expect(keys(p1.body)).toEqual(['a/1.txt', 'a/2.txt']);
    expect(p1.body.pagination).toEqual({ offset: 0, limit: 2, total: 3 });
    const p2 = await list('priv', a, '?limit=2&offset=2');
    expect(keys(p2.body)).toEqual(['a/3.txt']);
    expect(keys((await list('priv', a, '?prefix=b/')).body)).toEqual([]);
    expect(keys((await list('pub', {}, '?prefix=a/&search=2')).body)).toEqual(['a/2.txt']);
  });

  it('answers bad input and unknown buckets with the error envelope', async () => {
    for (const q of ['?limit=0', '?limit=1001', '?offset=-1', '?limit=x']) {
      const r = await list('pub', a, q);
      expect(r.status, q).toBe(400);
      expect(r.body).toMatchObject({ statusCode: 400, error: 'INVALID_INPUT' });
    }
    const missing = await list('nope', a);
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('BUCKET_NOT_FOUND');
  });

  it("the admin listing's refusal names this path", async () => {
    const r = await t.fetch('/api/storage/buckets/priv/objects', { headers: a });
    expect(r.status).toBe(403);
    expect(((await r.json()) as any).nextActions).toMatch(/\/api\/storage\/buckets\/\{bucketName\}\/list/);
  });
});
