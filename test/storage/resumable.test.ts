// Resumable uploads (tus 1.0.0) with the real tus-js-client: both drivers, both database backends.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { type Answer, at, call } from '../helpers/http.js';
import { startStorageApp, type DriverKind, type StorageTestApp } from './helpers.js';
import { bytesAt, tusUpload } from './tus.js';

const cases = backends().flatMap((b) => (['local', 's3'] as DriverKind[]).map((d) => [b, d] as const));
const PATH = '/api/storage/upload/resumable';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const meta = (m: Record<string, string>) =>
  Object.entries(m)
    .map(([k, v]) => `${k} ${b64(v)}`)
    .join(',');

describe.each(cases)('resumable uploads (%s, %s driver)', (backend, driver) => {
  let t: StorageTestApp;
  let user: Awaited<ReturnType<typeof createTestUser>>;
  let other: Awaited<ReturnType<typeof createTestUser>>;
  beforeAll(async () => {
    t = await startStorageApp(backend, driver, { MAX_UPLOAD_BYTES: String(64 * 1024 * 1024) });
    await t.createBucket('media');
    await t.createBucket('vault', false);
    user = await createTestUser(t);
    other = await createTestUser(t);
  });
  afterAll(async () => t?.close());

  /** Starts an upload by hand (POST), answering the upload URL. */
  const create = (size: number, m: Record<string, string>, headers: Record<string, string> = user.auth) =>
    call(t, 'POST', PATH, {
      headers: { ...headers, 'tus-resumable': '1.0.0', 'upload-length': String(size), 'upload-metadata': meta(m) },
    });
  const patch = (url: string, offset: number, body: Buffer, headers: Record<string, string> = user.auth) =>
    call(at(url), 'PATCH', '', {
      headers: {
        ...headers,
        'tus-resumable': '1.0.0',
        'upload-offset': String(offset),
        'content-type': 'application/offset+octet-stream',
      },
      raw: new Uint8Array(body),
    });
  /** HEAD or DELETE on an upload URL. */
  const tus = (method: string, url: string) =>
    call(at(url), method, '', { headers: { ...user.auth, 'tus-resumable': '1.0.0' } });

  it('uploads 20 MiB in 5 MiB chunks into an ordinary object (row, bytes, type, listing)', async () => {
    const data = bytesAt(1, 0, 20 * 1024 * 1024);
    const run = tusUpload(t.url + PATH, data, {
      headers: user.auth,
      metadata: { bucketName: 'media', objectName: 'videos/clip.bin', contentType: 'video/mp4' },
      chunkSize: 5 * 1024 * 1024,
    });
    await run.done;
    const r = await t.fetch('/api/storage/buckets/media/objects/videos/clip.bin');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('video/mp4');
    expect(Buffer.from(await r.arrayBuffer()).equals(data)).toBe(true);
    const list = await (await t.json('GET', '/api/storage/buckets/media/objects?prefix=videos/')).json();
    expect(list.data).toEqual([
      expect.objectContaining({ key: 'videos/clip.bin', size: data.length, mimeType: 'video/mp4' }),
    ]);
    const row = await t.deps.db.query<{ uploaded_by: string }>(
      `select uploaded_by from storage.objects where bucket = 'media' and key = 'videos/clip.bin'`,
    );
    expect(row.rows[0]!.uploaded_by).toBe(user.userId);
    // The upload itself is gone once it became the object.
    const head = await tus('HEAD', run.upload.url!);
    expect(head.status).toBe(404);
    if (driver === 'local') expect(t.localFiles()).toContain('media/videos~/clip.bin');
  });

  it("creation-with-upload: a small file in the POST itself; replaces the uploader's own object", async () => {
    for (const text of ['first', 'second version']) {
      const r = await t.fetch(PATH, {
        method: 'POST',
        headers: {
          ...user.auth,
          'tus-resumable': '1.0.0',
          'upload-length': String(text.length),
          'upload-metadata': meta({ bucketName: 'vault', objectName: 'note.txt', contentType: 'text/plain' }),
          'content-type': 'application/offset+octet-stream',
        },
        body: text,
      });
      expect(r.status).toBe(201);
      expect(r.headers.get('upload-offset')).toBe(String(text.length));
      expect(r.headers.get('x-object-url')).toBe(`${t.url}/api/storage/buckets/vault/objects/note.txt`);
      expect(r.headers.get('location')).toMatch(new RegExp(`^${t.url}${PATH}/tus\\.[0-9a-f]{32}$`));
    }
    const r = await t.fetch('/api/storage/buckets/vault/objects/note.txt', { headers: user.auth });
    expect(await r.text()).toBe('second version');
    expect((await t.fetch('/api/storage/buckets/vault/objects/note.txt', { headers: other.auth })).status).toBe(404);
  });

  it('termination: DELETE removes an unfinished upload; nothing becomes an object', async () => {
    const r = await create(1000, { bucketName: 'media', objectName: 'gone.bin' });
    expect(r.status).toBe(201);
    const url = r.headers.get('location')!;
    expect((await patch(url, 0, Buffer.alloc(400))).status).toBe(204);
    expect((await tus('DELETE', url)).status).toBe(204);
    expect((await tus('HEAD', url)).status).toBe(404);
    expect((await t.fetch('/api/storage/buckets/media/objects/gone.bin')).status).toBe(404);
  });

  it('refuses bad input with the envelope and writes nothing', async () => {
    const expectError = (r: Answer, status: number, code: string) => {
      expect(r.status).toBe(status);
      expect(r.body).toMatchObject({
        statusCode: status,
        error: code,
        message: expect.any(String),
        nextActions: expect.any(String),
      });
    };
    expectError(await create(10, { objectName: 'a.txt' }), 400, 'INVALID_INPUT');
    expectError(await create(10, { bucketName: 'media', objectName: '../x' }), 400, 'INVALID_KEY');
    expectError(await create(10, { bucketName: 'nope', objectName: 'a.txt' }), 404, 'BUCKET_NOT_FOUND');
    expectError(
      await create(65 * 1024 * 1024, { bucketName: 'media', objectName: 'big.bin' }),
      413,
      'PAYLOAD_TOO_LARGE',
    );
    expectError(await create(10, { bucketName: 'media', objectName: 'a.txt' }, {}), 401, 'UNAUTHORIZED');
    expectError(
      await create(10, { bucketName: 'media', objectName: 'a.txt' }, { 'x-api-key': t.anonKey }),
      403,
      'FORBIDDEN',
    );
    // Someone else's object: refused at creation, as PUT would be.
    expectError(await create(10, { bucketName: 'media', objectName: 'videos/clip.bin' }, other.auth), 403, 'FORBIDDEN');

    const r = await create(100, { bucketName: 'media', objectName: 'half.bin' });
    const url = r.headers.get('location')!;
    expect((await patch(url, 0, Buffer.alloc(40, 1))).status).toBe(204);
    expectError(await patch(url, 10, Buffer.alloc(10)), 409, 'UPLOAD_OFFSET_MISMATCH');
    expectError(await patch(url, 40, Buffer.alloc(61)), 413, 'UPLOAD_TOO_LONG');
    // Another user cannot see, resume or end it.
    expectError(await patch(url, 40, Buffer.alloc(10), other.auth), 404, 'RESUMABLE_UPLOAD_NOT_FOUND');
    // Protocol errors keep tus's status, in the envelope.
    expectError(
      await call(at(url), 'PATCH', '', {
        headers: { ...user.auth, 'upload-offset': '40', 'content-type': 'application/offset+octet-stream' },
        raw: 'x',
      }),
      412,
      'TUS_VERSION_UNSUPPORTED',
    );
    expectError(
      await call(at(url), 'PATCH', '', {
        headers: { ...user.auth, 'tus-resumable': '1.0.0', 'upload-offset': '40', 'content-type': 'text/plain' },
        raw: 'x',
      }),
      400,
      'INVALID_INPUT',
    );
    const h = await tus('HEAD', url);
    expect(h.headers.get('upload-offset')).toBe('40');
    expect((await t.fetch('/api/storage/buckets/media/objects/half.bin')).status).toBe(404);
    expectError(
      await call(t, 'PATCH', `${PATH}/tus.00000000000000000000000000000000`, {
        headers: {
          ...user.auth,
          'tus-resumable': '1.0.0',
          'upload-offset': '0',
          'content-type': 'application/offset+octet-stream',
        },
        raw: 'x',
      }),
      404,
      'RESUMABLE_UPLOAD_NOT_FOUND',
    );
  });

  it('the end checks again: a key taken meanwhile, a bucket deleted meanwhile; the upload goes, nothing is written', async () => {
    const head = (url: string) => tus('HEAD', url);
    // Another user takes the key while the upload is under way: the end is refused like a PUT.
    let r = await create(10, { bucketName: 'media', objectName: 'race.txt' });
    let url = r.headers.get('location')!;
    expect((await patch(url, 0, Buffer.from('12345'))).status).toBe(204);
    const put = await t.fetch('/api/storage/buckets/media/objects/race.txt', {
      method: 'PUT',
      headers: { ...other.auth, 'content-type': 'text/plain' },
      body: 'theirs',
    });
    expect(put.status).toBe(200);
    r = await patch(url, 5, Buffer.from('67890'));
    expect([r.status, r.body.error]).toEqual([403, 'FORBIDDEN']);
    expect((await head(url)).status).toBe(404);
    expect(await (await t.fetch('/api/storage/buckets/media/objects/race.txt')).text()).toBe('theirs');
    // The bucket goes while the upload is under way.
    await t.createBucket('brief');
    r = await create(10, { bucketName: 'brief', objectName: 'x.bin' });
    url = r.headers.get('location')!;
    expect((await patch(url, 0, Buffer.alloc(5))).status).toBe(204);
    expect((await t.json('DELETE', '/api/storage/buckets/brief')).status).toBe(200);
    r = await patch(url, 5, Buffer.alloc(5));
    expect([r.status, r.body.error]).toEqual([404, 'BUCKET_NOT_FOUND']);
    expect((await head(url)).status).toBe(404);
    if (driver === 'local') expect(t.localFiles().filter((f) => f.startsWith('brief/'))).toEqual([]);
    expect((await t.deps.db.query(`select 1 from storage.objects where bucket = 'brief'`)).rows).toEqual([]);
  });

  it('answers tus discovery (OPTIONS) with the extensions and the size limit', async () => {
    const r = await t.fetch(PATH, { method: 'OPTIONS' });
    expect(r.status).toBe(204);
    expect(r.headers.get('tus-version')).toContain('1.0.0');
    expect(r.headers.get('tus-extension')).toMatch(/creation.*termination/);
    expect(r.headers.get('tus-max-size')).toBe(String(64 * 1024 * 1024));
  });
});
