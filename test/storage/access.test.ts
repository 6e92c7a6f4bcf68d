// Who may call what: every storage endpoint with no credential, the anon key, user A,
// user B and the admin key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { at, call as request } from '../helpers/http.js';
import { startStorageApp, type StorageTestApp } from './helpers.js';

type Caller = 'none' | 'anon' | 'userA' | 'userB' | 'admin';
const CALLERS: Caller[] = ['none', 'anon', 'userA', 'userB', 'admin'];
type Expect = Record<Caller, number>;

const ADMIN_ONLY: Expect = { none: 401, anon: 403, userA: 403, userB: 403, admin: 200 };
const WRITERS: Expect = { none: 401, anon: 403, userA: 200, userB: 200, admin: 200 };
const EVERYONE: Expect = { none: 200, anon: 200, userA: 200, userB: 200, admin: 200 };
// A's object in a private bucket: B is told it does not exist.
const OWNER_PRIVATE: Expect = { none: 401, anon: 403, userA: 200, userB: 404, admin: 200 };

describe.each(backends())('storage access (%s)', (backend) => {
  let t: StorageTestApp;
  let headers: Record<Caller, Record<string, string>>;
  let n = 0;
  const uniq = () => `k${++n}`;

  beforeAll(async () => {
    t = await startStorageApp(backend, 'local');
    const a = await createTestUser(t);
    const b = await createTestUser(t);
    headers = { none: {}, anon: { apikey: t.anonKey }, userA: a.auth, userB: b.auth, admin: t.admin };
    await t.createBucket('pub', true);
    await t.createBucket('priv', false);
    for (const bucket of ['pub', 'priv']) {
      const r = await t.upload(bucket, { key: 'owned/by-a.txt', data: 'A data', headers: headers.userA });
      expect(r.status).toBe(200);
    }
  });
  afterAll(async () => t?.close());

  const call = (caller: Caller, method: string, path: string, body?: unknown) =>
    t.fetch(path, {
      method,
      headers: body === undefined ? headers[caller] : { ...headers[caller], 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  const matrix: Array<[string, Expect, (c: Caller) => Promise<Response>]> = [
    ['GET /buckets', ADMIN_ONLY, (c) => call(c, 'GET', '/api/storage/buckets')],
    [
      'POST /buckets',
      { ...ADMIN_ONLY, admin: 201 },
      (c) => call(c, 'POST', '/api/storage/buckets', { bucketName: uniq() }),
    ],
    ['PATCH /buckets/{b}', ADMIN_ONLY, (c) => call(c, 'PATCH', '/api/storage/buckets/pub', { isPublic: true })],
    [
      'DELETE /buckets/{b}',
      ADMIN_ONLY,
      async (c) => {
        const name = uniq();
        await t.createBucket(name);
        return call(c, 'DELETE', `/api/storage/buckets/${name}`);
      },
    ],
    ['GET /buckets/{b}/objects (list)', ADMIN_ONLY, (c) => call(c, 'GET', '/api/storage/buckets/pub/objects')],
    [
      'POST upload-strategy',
      WRITERS,
      (c) => call(c, 'POST', '/api/storage/buckets/priv/upload-strategy', { filename: 'x.txt' }),
    ],
    ['PUT a new key', WRITERS, (c) => t.upload('priv', { key: `new/${uniq()}.txt`, data: 'x', headers: headers[c] })],
    [
      'POST an object',
      { ...WRITERS, userA: 201, userB: 201, admin: 201 },
      (c) => t.upload('pub', { data: 'x', headers: headers[c] }),
    ],
    [
      "PUT over A's object (public bucket)",
      { none: 401, anon: 403, userA: 200, userB: 403, admin: 200 },
      (c) => t.upload('pub', { key: 'owned/by-a.txt', data: 'A data', headers: headers[c] }),
    ],
    [
      "PUT over A's object (private bucket)",
      OWNER_PRIVATE,
      (c) => t.upload('priv', { key: 'owned/by-a.txt', data: 'A data', headers: headers[c] }),
    ],
    [
      "POST with path over A's object (private bucket)",
      { ...OWNER_PRIVATE, userA: 201, admin: 201 },
      (c) => t.upload('priv', { path: 'owned/by-a.txt', data: 'A data', headers: headers[c] }),
    ],
    [
      'GET an object, public bucket',
      EVERYONE,
      (c) => call(c, 'GET', '/api/storage/buckets/pub/objects/owned/by-a.txt'),
    ],
    [
      'GET an object, private bucket',
      OWNER_PRIVATE,
      (c) => call(c, 'GET', '/api/storage/buckets/priv/objects/owned/by-a.txt'),
    ],
    [
      'download-strategy, public bucket',
      EVERYONE,
      (c) => call(c, 'POST', '/api/storage/buckets/pub/objects/owned/by-a.txt/download-strategy', {}),
    ],
    [
      'download-strategy, private bucket',
      OWNER_PRIVATE,
      (c) => call(c, 'POST', '/api/storage/buckets/priv/objects/owned/by-a.txt/download-strategy', {}),
    ],
    [
      'confirm-upload of an object of A',
      { none: 401, anon: 403, userA: 200, userB: 404, admin: 200 },
      (c) => call(c, 'POST', '/api/storage/buckets/priv/objects/owned/by-a.txt/confirm-upload', { size: 6 }),
    ],
    [
      "DELETE A's object, public bucket",
      { none: 401, anon: 403, userA: 200, userB: 403, admin: 200 },
      async (c) => {
        const key = `del/${uniq()}.txt`;
        expect((await t.upload('pub', { key, data: 'x', headers: headers.userA })).status).toBe(200);
        return call(c, 'DELETE', `/api/storage/buckets/pub/objects/${key}`);
      },
    ],
    [
      "DELETE A's object, private bucket",
      { none: 401, anon: 403, userA: 200, userB: 404, admin: 200 },
      async (c) => {
        const key = `del/${uniq()}.txt`;
        expect((await t.upload('priv', { key, data: 'x', headers: headers.userA })).status).toBe(200);
        return call(c, 'DELETE', `/api/storage/buckets/priv/objects/${key}`);
      },
    ],
  ];

  it.each(matrix)('%s', async (_name, expected, run) => {
    const got: Partial<Record<Caller, number>> = {};
    for (const c of CALLERS) {
      const r = await run(c);
      got[c] = r.status;
      if (r.status >= 400) {
        const body = await r.json();
        expect(body).toEqual({
          statusCode: r.status,
          error: expect.any(String),
          message: expect.any(String),
          nextActions: expect.any(String),
        });
      } else {
        await r.arrayBuffer();
      }
    }
    expect(got).toEqual(expected);
  });

  it('a bad credential is a 401 even on a public object', async () => {
    const r = await t.fetch('/api/storage/buckets/pub/objects/owned/by-a.txt', {
      headers: { authorization: 'Bearer not-a-jwt' },
    });
    expect(r.status).toBe(401);
  });

  it("writing over someone else's private object answers as a missing object and changes nothing", async () => {
    const key = 'owned/secret.txt';
    const path = `/api/storage/buckets/priv/objects/${key}`;
    expect((await t.upload('priv', { key, data: 'A secret', headers: headers.userA })).status).toBe(200);
    const before = await call('userA', 'GET', path);
    expect(await before.text()).toBe('A secret');
    // What B is told about a key it cannot see, and what it would be told for a missing one.
    const asRead = await (await call('userB', 'GET', path)).json();
    expect(asRead.error).toBe('OBJECT_NOT_FOUND');
    const missing = await (await call('userB', 'DELETE', '/api/storage/buckets/priv/objects/owned/none.txt')).json();
    const attempts = [
      () => t.upload('priv', { key, data: 'B bytes', headers: headers.userB }),
      () => t.upload('priv', { path: key, data: 'B bytes', headers: headers.userB }),
      () =>
        t.fetch(path, { method: 'PUT', headers: { ...headers.userB, 'content-type': 'text/plain' }, body: 'B bytes' }),
    ];
    for (const attempt of attempts) {
      const r = await attempt();
      expect(r.status).toBe(404);
      const body = await r.json();
      expect(body).toEqual(asRead);
      expect(body.message).toBe(missing.message.replace('owned/none.txt', key));
    }
    const after = await call('userA', 'GET', path);
    expect(await after.text()).toBe('A secret');
    for (const h of ['etag', 'last-modified', 'content-type']) expect(after.headers.get(h)).toBe(before.headers.get(h));
    const listed = await (await call('admin', 'GET', '/api/storage/buckets/priv/objects?prefix=owned/secret')).json();
    expect(listed.data).toHaveLength(1);
    expect(listed.data[0]).toMatchObject({ size: 8, etag: before.headers.get('etag')!.replaceAll('"', '') });
  });

  it('the uploader of a private object can still read it after an admin replaced it', async () => {
    expect((await t.upload('priv', { key: 'owned/by-a.txt', data: 'admin v2' })).status).toBe(200);
    const r = await call('userA', 'GET', '/api/storage/buckets/priv/objects/owned/by-a.txt');
    expect(await r.text()).toBe('admin v2');
  });

  describe('signed URLs of private objects (local driver)', () => {
    let url: URL;
    beforeAll(async () => {
      const r = await call('userA', 'POST', '/api/storage/buckets/priv/objects/owned/by-a.txt/download-strategy', {
        expiresIn: 60,
      });
      url = new URL((await r.json()).url);
    });

    it('work with no credential until they expire', async () => {
      expect(url.searchParams.get('token')).toMatch(/^\d+\.[\w-]{43}$/);
      const r = await request(at(url), 'GET', '');
      expect(r.status).toBe(200);
      expect(r.text).toBe('admin v2');
    });

    it.each([
      [
        'a tampered signature',
        (u: URL) =>
          u.searchParams.set(
            'token',
            u.searchParams.get('token')!.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')),
          ),
      ],
      [
        'a later expiry',
        (u: URL) =>
          u.searchParams.set(
            'token',
            u.searchParams.get('token')!.replace(/^\d+/, (e) => String(Number(e) + 1000)),
          ),
      ],
      [
        'an expired token',
        (u: URL) => u.searchParams.set('token', u.searchParams.get('token')!.replace(/^\d+/, '1000')),
      ],
      ['another key', (u: URL) => (u.pathname = u.pathname.replace('by-a.txt', 'other.txt'))],
      ['another bucket', (u: URL) => (u.pathname = u.pathname.replace('/priv/', '/pub/'))],
      ['garbage', (u: URL) => u.searchParams.set('token', 'garbage')],
    ])('are refused with %s', async (_name, mutate) => {
      const u = new URL(url);
      mutate(u);
      const r = await request(at(u), 'GET', '');
      expect(r.status).toBe(403);
      expect(r.body.error).toBe('INVALID_SIGNED_URL');
    });

    it('stop working once the object is replaced, deleted or re-created by someone else', async () => {
      const path = '/api/storage/buckets/priv/objects/avatars/avatar.png';
      const put = (caller: Caller, data: string) =>
        t.fetch(path, { method: 'PUT', headers: { ...headers[caller], 'content-type': 'image/png' }, body: data });
      const link = async () => {
        const r = await call('userA', 'POST', `${path}/download-strategy`, { expiresIn: 604800 });
        expect(r.status).toBe(200);
        return (await r.json()).url as string;
      };
      const refused = async (u: string) => {
        for (const method of ['GET', 'HEAD']) {
          const r = await request(at(u), method, '');
          expect(r.status).toBe(403);
          expect(r.text).not.toContain('B private');
          if (method === 'GET') expect(r.body.error).toBe('INVALID_SIGNED_URL');
        }
      };
      expect((await put('userA', 'A v1')).status).toBe(200);
      const v1 = await link();
      expect((await request(at(v1), 'GET', '')).text).toBe('A v1');
      // Replaced by its uploader: the old link goes, a new one works.
      expect((await put('userA', 'A v2')).status).toBe(200);
      await refused(v1);
      const v2 = await link();
      expect((await request(at(v2), 'GET', '')).text).toBe('A v2');
      // Deleted: the link goes (as an invalid link, so a token cannot probe keys either).
      expect((await call('userA', 'DELETE', path)).status).toBe(200);
      await refused(v2);
      // Re-created by B at the same key: A's old links do not read B's private bytes.
      expect((await put('userB', 'B private')).status).toBe(200);
      await refused(v1);
      await refused(v2);
      expect(await (await call('userB', 'GET', path)).text()).toBe('B private');
    });
  });
});
