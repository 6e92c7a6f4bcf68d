// Every bucket and object endpoint, on both drivers and both database backends.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { at, call } from '../helpers/http.js';
import { encodeKey, startStorageApp, type DriverKind, type StorageTestApp } from './helpers.js';

const cases = backends().flatMap((b) => (['local', 's3'] as DriverKind[]).map((d) => [b, d] as const));

describe.each(cases)('storage endpoints (%s, %s driver)', (backend, driver) => {
  let t: StorageTestApp;
  beforeAll(async () => {
    t = await startStorageApp(backend, driver);
  });
  afterAll(async () => t?.close());

  describe('buckets', () => {
    it('creates (public by default), lists, changes visibility and refuses duplicates', async () => {
      let r = await t.json('POST', '/api/storage/buckets', { bucketName: 'photos' });
      expect(r.status).toBe(201);
      expect(await r.json()).toMatchObject({ bucket: 'photos', isPublic: true, message: expect.any(String) });
      r = await t.json('POST', '/api/storage/buckets', { bucketName: 'Secret_1', isPublic: false });
      expect(await r.json()).toMatchObject({ bucket: 'Secret_1', isPublic: false });
      r = await t.json('POST', '/api/storage/buckets', { bucketName: 'photos' });
      expect(r.status).toBe(409);
      expect((await r.json()).error).toBe('ALREADY_EXISTS');
      r = await t.json('GET', '/api/storage/buckets');
      expect((await r.json()).buckets).toEqual(expect.arrayContaining(['photos', 'Secret_1']));
      r = await t.json('PATCH', '/api/storage/buckets/photos', { isPublic: false });
      expect(r.status).toBe(200);
      expect(await r.json()).toMatchObject({ bucket: 'photos', isPublic: false, message: expect.any(String) });
      r = await t.json('PATCH', '/api/storage/buckets/nope', { isPublic: false });
      expect(r.status).toBe(404);
      expect((await r.json()).error).toBe('BUCKET_NOT_FOUND');
      r = await t.json('PATCH', '/api/storage/buckets/photos', {});
      expect(r.status).toBe(400);
    });

    it.each([
      ['', 400],
      ['has space', 400],
      ['dot.name', 400],
      ['x'.repeat(64), 400],
      ['../etc', 400],
    ])('refuses the bucket name %j', async (name, status) => {
      const r = await t.json('POST', '/api/storage/buckets', { bucketName: name });
      expect(r.status).toBe(status);
      expect((await r.json()).error).toBe('INVALID_INPUT');
    });

    it('deletes a bucket with all its objects, in the driver and the metadata', async () => {
      await t.createBucket('doomed');
      expect((await t.upload('doomed', { key: 'a/b.txt', data: 'x' })).status).toBe(200);
      expect((await t.upload('doomed', { key: 'c.txt', data: 'y' })).status).toBe(200);
      let r = await t.json('DELETE', '/api/storage/buckets/doomed');
      expect(r.status).toBe(200);
      expect(await r.json()).toEqual({ message: expect.any(String), nextActions: expect.any(String) });
      expect((await t.json('GET', '/api/storage/buckets')).status).toBe(200);
      expect((await (await t.json('GET', '/api/storage/buckets')).json()).buckets).not.toContain('doomed');
      const { rows } = await t.deps.db.query(`select 1 from storage.objects where bucket = 'doomed'`);
      expect(rows).toEqual([]);
      const left: string[] = [];
      for await (const k of t.deps.storage.driver.list('doomed')) left.push(k);
      expect(left).toEqual([]);
      if (driver === 'local') expect(t.localFiles().filter((f) => f.startsWith('doomed/'))).toEqual([]);
      r = await t.json('DELETE', '/api/storage/buckets/doomed');
      expect(r.status).toBe(404);
      // The name is free again and the new bucket is empty.
      await t.createBucket('doomed');
      expect((await t.fetch('/api/storage/buckets/doomed/objects/c.txt')).status).toBe(404);
    });
  });

  describe('objects', () => {
    beforeAll(async () => {
      await t.createBucket('objs');
    });

    it('PUT to a key creates then replaces, GET returns the bytes with headers', async () => {
      let r = await t.upload('objs', { key: 'docs/readme.txt', data: 'first version', type: 'text/plain' });
      expect(r.status).toBe(200);
      const created = await r.json();
      expect(created).toMatchObject({ bucket: 'objs', key: 'docs/readme.txt', size: 13, mimeType: 'text/plain' });
      expect(new Date(created.uploadedAt).toString()).not.toBe('Invalid Date');
      expect(created.url).toBe(`${t.url}/api/storage/buckets/objs/objects/docs/readme.txt`);
      r = await t.upload('objs', { key: 'docs/readme.txt', data: 'second', type: 'text/markdown' });
      expect(await r.json()).toMatchObject({ size: 6, mimeType: 'text/markdown' });
      r = await t.fetch('/api/storage/buckets/objs/objects/docs/readme.txt');
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe('text/markdown');
      expect(r.headers.get('content-length')).toBe('6');
      expect(r.headers.get('etag')).toMatch(/^"[^"]+"$/);
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
      expect(await r.text()).toBe('second');
      r = await t.fetch('/api/storage/buckets/objs/objects/docs/readme.txt', { method: 'HEAD' });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-length')).toBe('6');
      expect(await r.text()).toBe('');
    });

    it('PUT accepts a raw body too', async () => {
      const r = await t.fetch('/api/storage/buckets/objs/objects/raw/data.json', {
        method: 'PUT',
        headers: { ...t.admin, 'content-type': 'application/json' },
        body: '{"a":1}',
      });
      expect(r.status).toBe(200);
      expect(await r.json()).toMatchObject({ key: 'raw/data.json', size: 7, mimeType: 'application/json' });
      expect(await (await t.fetch('/api/storage/buckets/objs/objects/raw/data.json')).text()).toBe('{"a":1}');
    });

    it('keys with slashes work sent raw or as %2F, and unicode keys round-trip', async () => {
      const key = 'deep/er/ünï cødé €.txt';
      let r = await t.fetch(`/api/storage/buckets/objs/objects/${encodeURIComponent(key)}`, {
        method: 'PUT',
        headers: { ...t.admin, 'content-type': 'text/plain' },
        body: 'unicode',
      });
      expect(r.status).toBe(200);
      expect((await r.json()).key).toBe(key);
      r = await t.fetch(`/api/storage/buckets/objs/objects/${encodeKey(key)}`);
      expect(await r.text()).toBe('unicode');
      r = await t.fetch(`/api/storage/buckets/objs/objects/deep%2Fer/${encodeURIComponent('ünï cødé €.txt')}`);
      expect(await r.text()).toBe('unicode');
    });

    it('accepts the longest key the store holds and refuses one byte more', async () => {
      // 1024 bytes; S3 counts the driver's "<bucket>/" prefix too.
      const longest = driver === 's3' ? 1024 - 'objs/'.length : 1024;
      const segment = 'k'.repeat(200);
      const key = [segment, segment, segment, segment, 'k'.repeat(longest - 4 * 201)].join('/');
      expect(Buffer.byteLength(key)).toBe(longest);
      let r = await t.upload('objs', { key, data: 'long' });
      expect(r.status).toBe(200);
      expect(await (await t.fetch(`/api/storage/buckets/objs/objects/${key}`)).text()).toBe('long');
      r = await t.upload('objs', { key: `${key}k`, data: 'long' });
      expect(r.status).toBe(400);
      expect((await r.json()).error).toBe('INVALID_KEY');
    });

    it('POST stores under `path`, or a generated key from the file name', async () => {
      let r = await t.upload('objs', { path: 'chosen/key.txt', data: 'chosen', filename: 'ignored.txt' });
      expect(r.status).toBe(201);
      expect(await r.json()).toMatchObject({ key: 'chosen/key.txt', size: 6 });
      r = await t.upload('objs', { data: 'generated', filename: 'My Holiday Photo!.PNG', type: 'image/png' });
      expect(r.status).toBe(201);
      const o = await r.json();
      expect(o.key).toMatch(/^My-Holiday-Photo-\d+-[0-9a-f]{8}\.png$/);
      expect(o.mimeType).toBe('image/png');
      expect(await (await t.fetch(`/api/storage/buckets/objs/objects/${o.key}`)).text()).toBe('generated');
    });

    it('serves byte ranges with 206, and 416 outside the object', async () => {
      await t.upload('objs', { key: 'range.txt', data: '0123456789' });
      let r = await t.fetch('/api/storage/buckets/objs/objects/range.txt', { headers: { range: 'bytes=2-5' } });
      expect(r.status).toBe(206);
      expect(r.headers.get('content-range')).toBe('bytes 2-5/10');
      expect(r.headers.get('content-length')).toBe('4');
      expect(await r.text()).toBe('2345');
      r = await t.fetch('/api/storage/buckets/objs/objects/range.txt', { headers: { range: 'bytes=-3' } });
      expect(await r.text()).toBe('789');
      r = await t.fetch('/api/storage/buckets/objs/objects/range.txt', { headers: { range: 'bytes=7-' } });
      expect(await r.text()).toBe('789');
      r = await t.fetch('/api/storage/buckets/objs/objects/range.txt', { headers: { range: 'bytes=10-20' } });
      expect(r.status).toBe(416);
      expect(r.headers.get('content-range')).toBe('bytes */10');
      expect((await r.json()).error).toBe('RANGE_NOT_SATISFIABLE');
    });

    it('answers 304 to a matching If-None-Match', async () => {
      const r = await t.fetch('/api/storage/buckets/objs/objects/range.txt');
      const etag = r.headers.get('etag')!;
      await r.arrayBuffer();
      const again = await t.fetch('/api/storage/buckets/objs/objects/range.txt', {
        headers: { 'if-none-match': etag },
      });
      expect(again.status).toBe(304);
    });

    it('serves HTML, SVG and JS as attachments with nosniff; images inline', async () => {
      for (const [key, type] of [
        ['x.html', 'text/html'],
        ['x.svg', 'image/svg+xml'],
        ['x.js', 'text/javascript'],
        ['x.xhtml', 'application/xhtml+xml'],
      ]) {
        await t.upload('objs', { key: `danger/${key}`, data: '<script>alert(1)</script>', type });
        const r = await t.fetch(`/api/storage/buckets/objs/objects/danger/${key}`);
        expect(r.headers.get('content-disposition')).toMatch(/^attachment;/);
        expect(r.headers.get('x-content-type-options')).toBe('nosniff');
        expect(r.headers.get('content-security-policy')).toContain('sandbox');
        await r.arrayBuffer();
      }
      await t.upload('objs', { key: 'img.png', data: 'png', type: 'image/png' });
      const r = await t.fetch('/api/storage/buckets/objs/objects/img.png');
      expect(r.headers.get('content-disposition')).toMatch(/^inline;/);
      await r.arrayBuffer();
    });

    it('lists with prefix, search, limit, offset and the total', async () => {
      await t.createBucket('listing');
      for (const k of ['a/1.txt', 'a/2.txt', 'a/3.log', 'b/1.txt', 'c_100%.txt'])
        await t.upload('listing', { key: k, data: k });
      let r = await t.json('GET', '/api/storage/buckets/listing/objects');
      let body = await r.json();
      expect(body.pagination).toEqual({ offset: 0, limit: 100, total: 5 });
      expect(body.data.map((o: { key: string }) => o.key)).toEqual([
        'a/1.txt',
        'a/2.txt',
        'a/3.log',
        'b/1.txt',
        'c_100%.txt',
      ]);
      expect(body.data[0]).toMatchObject({
        bucket: 'listing',
        size: 7,
        mimeType: 'text/plain',
        url: expect.stringContaining('/objects/a/1.txt'),
      });
      r = await t.json('GET', '/api/storage/buckets/listing/objects?prefix=a/&limit=2&offset=1');
      body = await r.json();
      expect(body.data.map((o: { key: string }) => o.key)).toEqual(['a/2.txt', 'a/3.log']);
      expect(body.pagination).toEqual({ offset: 1, limit: 2, total: 3 });
      r = await t.json('GET', '/api/storage/buckets/listing/objects?search=1.TXT');
      expect((await r.json()).data.map((o: { key: string }) => o.key)).toEqual(['a/1.txt', 'b/1.txt']);
      // LIKE wildcards in search are literal.
      r = await t.json('GET', `/api/storage/buckets/listing/objects?search=${encodeURIComponent('_100%')}`);
      expect((await r.json()).data.map((o: { key: string }) => o.key)).toEqual(['c_100%.txt']);
      for (const q of ['limit=0', 'limit=1001', 'offset=-1', 'limit=abc']) {
        r = await t.json('GET', `/api/storage/buckets/listing/objects?${q}`);
        expect(r.status).toBe(400);
      }
      r = await t.json('GET', '/api/storage/buckets/nope/objects');
      expect(r.status).toBe(404);
      expect((await r.json()).error).toBe('BUCKET_NOT_FOUND');
    });

    it('DELETE removes the object from the driver and the metadata', async () => {
      await t.upload('objs', { key: 'gone/soon.txt', data: 'bye' });
      let r = await t.json('DELETE', '/api/storage/buckets/objs/objects/gone/soon.txt');
      expect(r.status).toBe(200);
      expect((await r.json()).message).toEqual(expect.any(String));
      r = await t.fetch('/api/storage/buckets/objs/objects/gone/soon.txt');
      expect(r.status).toBe(404);
      expect((await r.json()).error).toBe('OBJECT_NOT_FOUND');
      await expect(t.deps.storage.driver.head('objs', 'gone/soon.txt')).rejects.toThrow();
      r = await t.json('DELETE', '/api/storage/buckets/objs/objects/gone/soon.txt');
      expect(r.status).toBe(404);
    });

    it('download-strategy: direct URL for a public bucket, default expiry 3600 for private', async () => {
      await t.upload('objs', { key: 'dl/pub.txt', data: 'public bytes' });
      let r = await t.json('POST', '/api/storage/buckets/objs/objects/dl/pub.txt/download-strategy', {});
      expect(r.status).toBe(200);
      let s = await r.json();
      expect(s).toEqual({ method: 'direct', url: `${t.url}/api/storage/buckets/objs/objects/dl/pub.txt` });
      expect((await call(at(s.url), 'GET', '')).text).toBe('public bytes');

      await t.createBucket('priv', false);
      await t.upload('priv', { key: 'dl/secret file.txt', data: 'private bytes' });
      const before = Date.now();
      r = await t.json(
        'POST',
        `/api/storage/buckets/priv/objects/${encodeKey('dl/secret file.txt')}/download-strategy`,
      );
      s = await r.json();
      expect(s.method).toBe(driver === 's3' ? 'presigned' : 'direct');
      const ttl = new Date(s.expiresAt).getTime() - before;
      expect(ttl).toBeGreaterThan(3590_000);
      expect(ttl).toBeLessThan(3610_000);
      // The URL works with no credential at all.
      const signed = await call(at(s.url), 'GET', '');
      expect(signed.status).toBe(200);
      expect(signed.text).toBe('private bytes');
      r = await t.json(
        'POST',
        `/api/storage/buckets/priv/objects/${encodeKey('dl/secret file.txt')}/download-strategy`,
        { expiresIn: 0 },
      );
      expect(r.status).toBe(400);
      r = await t.json('POST', '/api/storage/buckets/priv/objects/missing.txt/download-strategy', { expiresIn: 60 });
      expect(r.status).toBe(404);
    });

    it('upload-strategy describes how to upload, with every field', async () => {
      const r = await t.json('POST', '/api/storage/buckets/objs/upload-strategy', {
        filename: 'report final.pdf',
        contentType: 'application/pdf',
        size: 1234,
      });
      expect(r.status).toBe(200);
      const s = await r.json();
      expect(s.key).toMatch(/^report-final-\d+-[0-9a-f]{8}\.pdf$/);
      expect(s.confirmUrl).toBe(`/api/storage/buckets/objs/objects/${s.key}/confirm-upload`);
      expect(new Date(s.expiresAt).getTime()).toBeGreaterThan(Date.now() + 3500_000);
      if (driver === 'local') {
        expect(s).toMatchObject({
          method: 'direct',
          fields: {},
          confirmRequired: false,
          uploadUrl: `${t.url}/api/storage/buckets/objs/objects/${s.key}`,
        });
      } else {
        expect(s).toMatchObject({ method: 'presigned', confirmRequired: true });
        expect(s.fields).toMatchObject({
          key: `objs/${s.key}`,
          'Content-Type': 'application/pdf',
          Policy: expect.any(String),
        });
        const policy = JSON.parse(Buffer.from(s.fields.Policy, 'base64').toString());
        expect(policy.conditions).toContainEqual(['content-length-range', 0, 100 * 1024 * 1024]);
        expect(policy.conditions).toContainEqual(['eq', '$Content-Type', 'application/pdf']);
        expect(new Date(policy.expiration).getTime() - Date.now()).toBeGreaterThan(3500_000);
      }
      const big = await t.json('POST', '/api/storage/buckets/objs/upload-strategy', {
        filename: 'x.bin',
        size: 100 * 1024 * 1024 + 1,
      });
      expect(big.status).toBe(413);
      const none = await t.json('POST', '/api/storage/buckets/objs/upload-strategy', {});
      expect(none.status).toBe(400);
      const nob = await t.json('POST', '/api/storage/buckets/nope/upload-strategy', { filename: 'a.txt' });
      expect(nob.status).toBe(404);
    });

    if (driver === 'local') {
      it('local: the direct strategy flow works end to end (PUT to uploadUrl, optional confirm)', async () => {
        const s = await (
          await t.json('POST', '/api/storage/buckets/objs/upload-strategy', { filename: 'direct.txt' })
        ).json();
        const put = await call(at(s.uploadUrl), 'PUT', '', {
          headers: { ...t.admin, 'content-type': 'text/plain' },
          raw: 'direct upload',
        });
        expect(put.status).toBe(200);
        let r = await t.json('POST', s.confirmUrl, { size: 13 });
        expect(r.status).toBe(200);
        expect(await r.json()).toMatchObject({ key: s.key, size: 13 });
        r = await t.json('POST', s.confirmUrl, { size: 12 });
        expect(r.status).toBe(400);
        expect((await r.json()).error).toBe('UPLOAD_MISMATCH');
      });
    }
  });

  it('reports the storage health check', async () => {
    const r = await t.fetch('/api/health?checks=true');
    expect((await r.json()).checks.storage).toEqual({ status: 'ok' });
  });
});

describe('PUBLIC_URL', () => {
  let t: StorageTestApp;
  beforeAll(async () => {
    t = await startStorageApp('embedded', 'local', { PUBLIC_URL: 'https://files.example.com' });
    await t.createBucket('pu', false);
  });
  afterAll(async () => t?.close());

  it('is the base of every URL handed out', async () => {
    const o = await (await t.upload('pu', { key: 'a b/c.txt', data: 'x' })).json();
    expect(o.url).toBe('https://files.example.com/api/storage/buckets/pu/objects/a%20b/c.txt');
    const s = await (await t.json('POST', '/api/storage/buckets/pu/upload-strategy', { filename: 'x.txt' })).json();
    expect(s.uploadUrl.startsWith('https://files.example.com/api/storage/buckets/pu/objects/')).toBe(true);
    const d = await (await t.json('POST', '/api/storage/buckets/pu/objects/a%20b/c.txt/download-strategy', {})).json();
    expect(d.url).toMatch(/^https:\/\/files\.example\.com\/api\/storage\/buckets\/pu\/objects\/a%20b\/c\.txt\?token=/);
  });
});
