// Image transforms on download (sharp): public, signed and presigned paths, cache, limits.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { at, send } from '../helpers/http.js';
import { flatPng, startStorageApp, type DriverKind, type StorageTestApp } from './helpers.js';

const cases = backends().flatMap((b) => (['local', 's3'] as DriverKind[]).map((d) => [b, d] as const));

/** A w×h JPEG with some detail (a gradient and noise), as a camera would give. */
async function photo(w: number, h: number): Promise<Buffer> {
  const raw = Buffer.alloc(w * h * 3);
  for (let i = 0; i < raw.length; i++) raw[i] = ((i % (w * 3)) * 255) / (w * 3) + ((i * 7919) % 23);
  return sharp(raw, { raw: { width: w, height: h, channels: 3 } })
    .jpeg({ quality: 85 })
    .toBuffer();
}

describe.each(cases)('image transforms (%s, %s driver)', (backend, driver) => {
  let t: StorageTestApp;
  let user: Awaited<ReturnType<typeof createTestUser>>;
  let jpeg: Buffer;
  const put = async (
    bucket: string,
    key: string,
    body: Buffer | string,
    type: string,
    headers: Record<string, string> = t.admin,
  ) => {
    const r = await t.fetch(`/api/storage/buckets/${bucket}/objects/${key}`, {
      method: 'PUT',
      headers: { ...headers, 'content-type': type },
      body: typeof body === 'string' ? body : new Uint8Array(body),
    });
    expect(r.status).toBe(200);
  };
  const get = (p: string, headers: Record<string, string> = {}) => t.fetch(p, { headers });
  const dims = async (r: Response) => {
    const m = await sharp(Buffer.from(await r.arrayBuffer())).metadata();
    return { width: m.width, height: m.height, format: m.format };
  };

  beforeAll(async () => {
    t = await startStorageApp(backend, driver);
    await t.createBucket('pics');
    await t.createBucket('private', false);
    user = await createTestUser(t);
    jpeg = await photo(1000, 1000);
    await put('pics', 'a/photo.jpg', jpeg, 'image/jpeg');
    await put('private', 'me.jpg', jpeg, 'image/jpeg', user.auth);
  });
  afterAll(async () => t?.close());

  it('resizes and converts on a public path; format, then Accept, then the source pick the type', async () => {
    let r = await get('/api/storage/buckets/pics/objects/a/photo.jpg?width=400&format=webp');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('image/webp');
    expect(await dims(r)).toEqual({ width: 400, height: 400, format: 'webp' });
    r = await get('/api/storage/buckets/pics/objects/a/photo.jpg?width=300', { accept: 'image/avif,*/*' });
    expect(r.headers.get('content-type')).toBe('image/avif');
    expect(r.headers.get('vary')).toContain('Accept');
    expect((await dims(r)).width).toBe(300);
    r = await get('/api/storage/buckets/pics/objects/a/photo.jpg?width=300', { accept: 'image/webp,image/avif' });
    expect(r.headers.get('content-type')).toBe('image/webp');
    r = await get('/api/storage/buckets/pics/objects/a/photo.jpg?width=300');
    expect(await dims(r)).toEqual({ width: 300, height: 300, format: 'jpeg' });
    r = await get('/api/storage/buckets/pics/objects/a/photo.jpg?width=400&height=200&resize=contain&format=png');
    expect(await dims(r)).toEqual({ width: 400, height: 200, format: 'png' });
    r = await get(
      '/api/storage/buckets/pics/objects/a/photo.jpg?width=400&height=100&resize=fill&format=jpeg&quality=40',
    );
    expect(await dims(r)).toEqual({ width: 400, height: 100, format: 'jpeg' });
    // Never enlarged; HEAD describes the same rendition.
    r = await get('/api/storage/buckets/pics/objects/a/photo.jpg?width=3000&format=webp');
    expect((await dims(r)).width).toBe(1000);
    const h = await t.fetch('/api/storage/buckets/pics/objects/a/photo.jpg?width=400&format=webp', { method: 'HEAD' });
    expect(h.status).toBe(200);
    expect(h.headers.get('content-type')).toBe('image/webp');
  });

  it('caches renditions (ETag, 304, a file under DATA_DIR/renditions) and drops them when the object changes', async () => {
    const p = '/api/storage/buckets/pics/objects/c.jpg?width=100&format=webp';
    await put('pics', 'c.jpg', jpeg, 'image/jpeg');
    const first = await get(p);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect(readdirSync(path.join(t.dataDir, 'renditions')).length).toBeGreaterThan(0);
    const again = await get(p);
    expect(again.headers.get('etag')).toBe(etag);
    expect(Buffer.from(await again.arrayBuffer()).equals(Buffer.from(await first.arrayBuffer()))).toBe(true);
    expect((await get(p, { 'if-none-match': etag })).status).toBe(304);
    await put('pics', 'c.jpg', await photo(500, 250), 'image/jpeg');
    const changed = await get(p);
    expect(changed.headers.get('etag')).not.toBe(etag);
    expect(await dims(changed)).toEqual({ width: 100, height: 50, format: 'webp' });
  });

  it('private objects: the owner reads renditions; a signed link signs its transform', async () => {
    expect((await get('/api/storage/buckets/private/objects/me.jpg?width=50&format=png')).status).toBe(401);
    let r = await get('/api/storage/buckets/private/objects/me.jpg?width=50&format=png', user.auth);
    expect(await dims(r)).toEqual({ width: 50, height: 50, format: 'png' });
    r = await t.json(
      'POST',
      '/api/storage/buckets/private/objects/me.jpg/download-strategy',
      { expiresIn: 60, width: 120, format: 'webp' },
      user.auth,
    );
    const s = await r.json();
    expect(s.method).toBe('direct'); // also on S3: a presigned S3 link cannot transform
    expect(s.url).toMatch(/\?width=120&format=webp&token=/);
    r = await send(at(s.url), 'GET', '');
    expect(await dims(r)).toEqual({ width: 120, height: 120, format: 'webp' });
    const token = new URL(s.url).searchParams.get('token')!;
    for (const q of ['width=1000&format=webp', 'width=120&format=png', 'width=120', '']) {
      const other = await get(`/api/storage/buckets/private/objects/me.jpg?${q}${q ? '&' : ''}token=${token}`);
      expect(other.status).toBe(403);
      expect((await other.json()).error).toBe('INVALID_SIGNED_URL');
    }
    // The InsForge SDK's GET form takes the same parameters.
    r = await get(
      '/api/storage/buckets/private/download-strategy/objects/me.jpg?expiresIn=60&height=30&format=jpeg',
      user.auth,
    );
    const g = await r.json();
    expect(await dims(await send(at(g.url), 'GET', ''))).toEqual({ width: 30, height: 30, format: 'jpeg' });
  });

  it('refuses bad input with a 4xx envelope: parameters, non-images, a decompression bomb', async () => {
    await put('pics', 'notes.txt', 'hello', 'text/plain');
    await put('pics', 'fake.png', 'not really a png', 'image/png');
    await put('pics', 'bomb.png', flatPng(8000), 'image/png');
    const cases: Array<[string, number, string]> = [
      ['a/photo.jpg?width=0', 400, 'INVALID_INPUT'],
      ['a/photo.jpg?width=100000', 400, 'INVALID_INPUT'],
      ['a/photo.jpg?height=-5', 400, 'INVALID_INPUT'],
      ['a/photo.jpg?resize=stretch', 400, 'INVALID_INPUT'],
      ['a/photo.jpg?format=gif', 400, 'INVALID_INPUT'],
      ['a/photo.jpg?quality=101', 400, 'INVALID_INPUT'],
      ['notes.txt?width=10', 415, 'NOT_AN_IMAGE'],
      ['fake.png?width=10', 415, 'NOT_AN_IMAGE'],
      ['bomb.png?width=10', 422, 'IMAGE_TOO_LARGE'],
      ['missing.jpg?width=10', 404, 'OBJECT_NOT_FOUND'],
    ];
    for (const [p, status, code] of cases) {
      const started = Date.now();
      const r = await get(`/api/storage/buckets/pics/objects/${p}`);
      expect([p, r.status]).toEqual([p, status]);
      expect(await r.json()).toMatchObject({
        statusCode: status,
        error: code,
        message: expect.any(String),
        nextActions: expect.any(String),
      });
      expect(Date.now() - started).toBeLessThan(2000); // refused from the header, never decoded
    }
    // The objects themselves are still served as they are.
    expect(await (await get('/api/storage/buckets/pics/objects/notes.txt')).text()).toBe('hello');
  });
});
