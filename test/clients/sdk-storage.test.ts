import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@insforge/sdk';
import { backends } from '../helpers/db.js';
import { at, call } from '../helpers/http.js';
import { startStorageApp, type DriverKind, type StorageTestApp } from '../storage/helpers.js';
import { sdk, signedInClient } from './helpers.js';

const cases = backends().flatMap((b) => (['local', 's3'] as DriverKind[]).map((d) => [b, d] as const));

// The InsForge SDK's storage module (wire doc section 4) against a real Plinth, on both drivers.
describe.each(cases)('@insforge/sdk storage (%s, %s)', (backend, driver) => {
  let t: StorageTestApp;
  let alice: Awaited<ReturnType<typeof signedInClient>>;
  beforeAll(async () => {
    t = await startStorageApp(backend, driver);
    await t.createBucket('pub', true);
    await t.createBucket('priv', false);
    alice = await signedInClient(t, 'alice');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('upload (two-step flow) then download returns the same bytes; the answer names the stored key', async () => {
    const up = await alice.client.storage
      .from('priv')
      .upload('dir/a b.txt', new Blob(['hello world'], { type: 'text/plain' }));
    expect(up.error).toBeNull();
    expect(up.data).toMatchObject({ bucket: 'priv', size: 11, url: expect.stringMatching(/^http:\/\//) });
    // Local storage keeps the SDK's key (a direct PUT); S3 stores under the key upload-strategy generated.
    if (driver === 'local') expect(up.data!.key).toBe('dir/a b.txt');
    else expect(up.data!.key).toMatch(/^a-b-\d+-[0-9a-f]{8}\.txt$/);
    const down = await alice.client.storage.from('priv').download(up.data!.key);
    expect(down.error).toBeNull();
    expect(await down.data!.text()).toBe('hello world');
    // Someone else cannot: a private object of another user reads as missing.
    const bob = await signedInClient(t, 'bob');
    const denied = await bob.client.storage.from('priv').download(up.data!.key);
    expect(denied.data).toBeNull();
    expect(denied.error).toMatchObject({ statusCode: 404 });
  });

  it('uploadAuto generates the key on the client; the public URL serves the bytes to anyone', async () => {
    const file = new File(['{"a":1}'], 'My Photo.json', { type: 'application/json' });
    const up = await alice.client.storage.from('pub').uploadAuto(file);
    expect(up.error).toBeNull();
    const key = up.data!.key;
    expect(key).toMatch(/\.json$/);
    const { data } = alice.client.storage.from('pub').getPublicUrl(key);
    const r = await call(at(data!.publicUrl), 'GET', '');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.text).toBe('{"a":1}');
  });

  it('createSignedUrl gives an absolute URL that works with no headers; createSignedUrls one per key', async () => {
    const up = await alice.client.storage
      .from('priv')
      .upload('signed.txt', new Blob(['secret'], { type: 'text/plain' }));
    expect(up.error).toBeNull();
    const key = up.data!.key;
    const s = await alice.client.storage.from('priv').createSignedUrl(key, 120);
    expect(s.error).toBeNull();
    expect(s.data!.signedUrl).toMatch(/^http:\/\//);
    expect(Date.parse(s.data!.expiresAt!)).toBeGreaterThan(Date.now() + 60_000);
    const r = await call(at(s.data!.signedUrl), 'GET', '');
    expect(r.status).toBe(200);
    expect(r.text).toBe('secret');
    const many = await alice.client.storage.from('priv').createSignedUrls([key, key], 60);
    expect(many.error).toBeNull();
    expect(many.data).toHaveLength(2);
    // A missing key is STORAGE's not-found, not a fallback to the POST form.
    const missing = await alice.client.storage.from('priv').createSignedUrl('no-such.txt');
    expect(missing.error).toMatchObject({ statusCode: 404, error: 'OBJECT_NOT_FOUND' });
  });

  it('list is admin-only: a user is refused with a message that says so; the admin client gets objects and data', async () => {
    const refused = await alice.client.storage.from('pub').list();
    expect(refused.data).toBeNull();
    expect(refused.error).toMatchObject({
      statusCode: 403,
      error: 'FORBIDDEN',
      message: expect.stringMatching(/admin/i),
    });
    const admin = createClient({ baseUrl: t.url, accessToken: t.adminKey, retryCount: 0 });
    const up = await admin.storage.from('pub').upload('listed-one.txt', new Blob(['1']));
    expect(up.error).toBeNull();
    const listed = await admin.storage.from('pub').list({ search: 'listed', limit: 10 });
    expect(listed.error).toBeNull();
    const body = listed.data as unknown as { objects: Array<{ key: string }>; data: unknown[]; pagination: unknown };
    expect(body.objects.map((o) => o.key)).toEqual([up.data!.key]);
    expect(body.data).toEqual(body.objects);
    expect(body.pagination).toMatchObject({ offset: 0, limit: 10, total: body.objects.length });
  });

  it("a user lists what they may read through the SDK's HTTP client (/list): own private uploads, paged; list() names that path", async () => {
    const carol = await signedInClient(t, 'carol');
    const stored: string[] = [];
    for (const name of ['c1.txt', 'c2.txt', 'c3.txt']) {
      const up = await carol.client.storage.from('priv').upload(`carol/${name}`, new Blob([name]));
      expect(up.error).toBeNull();
      stored.push(up.data!.key);
    }
    const http = carol.client.getHttpClient();
    const page = (await http.get('/api/storage/buckets/priv/list', { params: { limit: '2', offset: '1' } })) as any;
    expect(page.objects.map((o: { key: string }) => o.key)).toEqual([...stored].sort().slice(1, 3));
    expect(page.pagination).toEqual({ offset: 1, limit: 2, total: 3 });
    // Alice's private objects are not Carol's to see.
    const all = (await http.get('/api/storage/buckets/priv/list', { params: { limit: '1000' } })) as any;
    expect(all.objects.every((o: { key: string }) => stored.includes(o.key))).toBe(true);
    const refused = await carol.client.storage.from('priv').list();
    expect(refused.error?.nextActions ?? '').toMatch(/\/list/);
  });

  it('remove(key) deletes one object; remove([...]) reports each key; one invalid key refuses the batch', async () => {
    const keys: string[] = [];
    for (const name of ['r1.txt', 'r2.txt', 'r3.txt']) {
      const up = await alice.client.storage.from('pub').upload(name, new Blob([name]));
      expect(up.error).toBeNull();
      keys.push(up.data!.key);
    }
    const one = await alice.client.storage.from('pub').remove(keys[0]!);
    expect(one.error).toBeNull();
    expect(one.data).toEqual({ message: expect.any(String) });
    const refused = await call(t, 'DELETE', '/api/storage/buckets/pub/objects', {
      token: alice.accessToken,
      body: { keys: [keys[1], '../bad'] },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('INVALID_KEY');
    expect((await call(t, 'GET', `/api/storage/buckets/pub/objects/${encodeURIComponent(keys[1]!)}`)).status).toBe(200);
    const batch = await alice.client.storage.from('pub').remove([keys[1]!, keys[2]!, keys[0]!]);
    expect(batch.error).toBeNull();
    expect(batch.data).toEqual({
      results: [
        { key: keys[1], status: 'deleted' },
        { key: keys[2], status: 'deleted' },
        { key: keys[0], status: 'notFound' },
      ],
    });
    expect((await call(t, 'GET', `/api/storage/buckets/pub/objects/${encodeURIComponent(keys[2]!)}`)).status).toBe(404);
    // Another user's object in a public bucket: refused for that key, with the reason.
    const mine = await alice.client.storage.from('pub').upload('alice-only.txt', new Blob(['a']));
    const bob = await signedInClient(t, 'bob2');
    const theirs = await bob.client.storage.from('pub').remove([mine.data!.key]);
    expect(theirs.data).toEqual({ results: [{ key: mine.data!.key, status: 'failed', message: expect.any(String) }] });
    // The anon key may not delete at all.
    expect((await sdk(t).storage.from('pub').remove([mine.data!.key])).error).toMatchObject({ statusCode: 403 });
  });
});
