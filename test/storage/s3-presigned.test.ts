// The full presigned flow against a real S3-compatible server (s3rver): upload-strategy →
// POST the form to uploadUrl → confirm-upload → download-strategy → GET the presigned URL.
// s3rver stores POSTed forms but does not check their signature or policy conditions, so the
// policy is checked as a document here and the server-side checks of confirm-upload (size,
// MAX_UPLOAD_BYTES) are what stop an oversize upload.
import { createHash, randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import type { UploadStrategy } from '../../src/storage/signed-transfers.js';
import { startStorageApp, type StorageTestApp } from './helpers.js';

async function postForm(s: UploadStrategy, data: Buffer, type: string): Promise<Response> {
  const fd = new FormData();
  for (const [k, v] of Object.entries(s.fields)) fd.append(k, v);
  fd.append('file', new Blob([data as BlobPart], { type }), 'upload.bin');
  return fetch(s.uploadUrl, { method: 'POST', body: fd }); // raw fetch: the form goes to S3 itself, not to Plinth
}

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * Sends `requests` pipelined on one connection and splits what comes back into responses by
 * their own framing (Content-Length or chunked), as a keep-alive client or proxy would.
 */
async function pipelined(base: string, requests: string[]): Promise<RawResponse[]> {
  const u = new URL(base);
  const sock = net.connect(Number(u.port), u.hostname);
  const chunks: Buffer[] = [];
  sock.on('data', (d) => chunks.push(d));
  const closed = new Promise((r) => sock.on('close', r));
  sock.on('error', () => {});
  sock.write(requests.join(''));
  await closed;
  let buf = Buffer.concat(chunks);
  const out: RawResponse[] = [];
  while (buf.length) {
    const end = buf.indexOf('\r\n\r\n');
    if (end < 0) throw new Error(`unframed bytes: ${JSON.stringify(buf.toString('latin1'))}`);
    const [statusLine, ...lines] = buf.subarray(0, end).toString('latin1').split('\r\n');
    const headers = Object.fromEntries(
      lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
    );
    let rest = buf.subarray(end + 4);
    let body: Buffer;
    if (headers['transfer-encoding'] === 'chunked') {
      const parts: Buffer[] = [];
      for (;;) {
        const eol = rest.indexOf('\r\n');
        const n = parseInt(rest.subarray(0, eol).toString(), 16);
        parts.push(rest.subarray(eol + 2, eol + 2 + n));
        rest = rest.subarray(eol + 2 + n + 2);
        if (n === 0) break;
      }
      body = Buffer.concat(parts);
    } else {
      const n = Number(headers['content-length'] ?? 0);
      body = rest.subarray(0, n);
      rest = rest.subarray(n);
    }
    out.push({ status: Number(statusLine!.split(' ')[1]), headers, body });
    buf = rest;
  }
  return out;
}

describe.each(backends())('S3 presigned flow (%s)', (backend) => {
  let t: StorageTestApp;
  let a: Record<string, string>;
  let b: Record<string, string>;
  const as = (h: Record<string, string>, method: string, path: string, body?: unknown) =>
    t.fetch(path, {
      method,
      headers: { ...h, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const strategy = async (h: Record<string, string>, body: object): Promise<UploadStrategy> => {
    const r = await as(h, 'POST', '/api/storage/buckets/up/upload-strategy', body);
    expect(r.status).toBe(200);
    return r.json();
  };

  beforeAll(async () => {
    t = await startStorageApp(backend, 's3');
    a = (await createTestUser(t)).auth;
    b = (await createTestUser(t)).auth;
    await t.createBucket('up', false);
  });
  afterAll(async () => t?.close());

  it('upload-strategy → POST to uploadUrl → confirm → download-strategy → GET presigned URL', async () => {
    const data = randomBytes(300_000);
    const s = await strategy(a, { filename: 'holiday photo.png', contentType: 'image/png', size: data.length });
    expect(s).toMatchObject({ method: 'presigned', confirmRequired: true });
    expect(s.uploadUrl.startsWith(t.s3!.endpoint)).toBe(true);
    expect(s.fields).toMatchObject({
      key: `up/${s.key}`,
      'Content-Type': 'image/png',
      'X-Amz-Signature': expect.any(String),
    });

    const up = await postForm(s, data, 'image/png');
    expect(up.status).toBe(204);
    const etag = up.headers.get('etag');

    // Someone else cannot confirm it; in this private bucket they are told no such upload exists.
    let r = await as(b, 'POST', s.confirmUrl, { size: data.length });
    expect(r.status).toBe(404);
    expect((await r.json()).error).toBe('UPLOAD_NOT_FOUND');
    r = await as(a, 'POST', s.confirmUrl, { size: data.length, contentType: 'image/png', etag: etag ?? undefined });
    expect(r.status).toBe(200);
    const obj = await r.json();
    expect(obj).toMatchObject({ bucket: 'up', key: s.key, size: data.length, mimeType: 'image/png' });
    // Confirming again is harmless and returns the same object.
    r = await as(a, 'POST', s.confirmUrl, { size: data.length });
    expect(r.status).toBe(200);

    // Through Plinth: the uploader yes, another user no.
    r = await t.fetch(`/api/storage/buckets/up/objects/${s.key}`, { headers: a });
    expect(
      createHash('sha256')
        .update(Buffer.from(await r.arrayBuffer()))
        .digest('hex'),
    ).toBe(createHash('sha256').update(data).digest('hex'));
    expect((await t.fetch(`/api/storage/buckets/up/objects/${s.key}`, { headers: b })).status).toBe(404);

    // Presigned download, default and custom expiry.
    r = await as(a, 'POST', `/api/storage/buckets/up/objects/${s.key}/download-strategy`, {});
    const d = await r.json();
    expect(d.method).toBe('presigned');
    const u = new URL(d.url);
    expect(u.origin).toBe(t.s3!.endpoint);
    expect(u.searchParams.get('X-Amz-Expires')).toBe('3600');
    expect(u.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    r = await fetch(d.url); // raw fetch: a presigned URL read from S3 itself, not from Plinth
    expect(r.status).toBe(200);
    expect(Buffer.from(await r.arrayBuffer()).equals(data)).toBe(true);
    r = await as(a, 'POST', `/api/storage/buckets/up/objects/${s.key}/download-strategy`, { expiresIn: 120 });
    expect(new URL((await r.json()).url).searchParams.get('X-Amz-Expires')).toBe('120');

    // Listed in the metadata like any other object.
    const list = await (await t.json('GET', '/api/storage/buckets/up/objects')).json();
    expect(list.data.map((o: { key: string }) => o.key)).toContain(s.key);
  });

  it('confirm before uploading is UPLOAD_INCOMPLETE; a wrong size removes the upload', async () => {
    const s = await strategy(a, { filename: 'x.txt', contentType: 'text/plain' });
    let r = await as(a, 'POST', s.confirmUrl, { size: 5 });
    expect(r.status).toBe(400);
    expect((await r.json()).error).toBe('UPLOAD_INCOMPLETE');
    expect((await postForm(s, Buffer.from('hello'), 'text/plain')).status).toBe(204);
    r = await as(a, 'POST', s.confirmUrl, { size: 6 });
    expect(r.status).toBe(400);
    expect((await r.json()).error).toBe('UPLOAD_MISMATCH');
    await expect(t.deps.storage.driver.head('up', s.key)).rejects.toThrow();
    r = await as(a, 'POST', s.confirmUrl, { size: 5 });
    expect(r.status).toBe(404);
    expect((await r.json()).error).toBe('UPLOAD_NOT_FOUND');
    const { rows } = await t.deps.db.query('select 1 from storage.objects where bucket = $1 and key = $2', [
      'up',
      s.key,
    ]);
    expect(rows).toEqual([]);
  });

  it('after re-POSTing the still-valid form with more bytes, responses stay framed by what S3 serves', async () => {
    const s = await strategy(a, { filename: 'split.txt', contentType: 'text/plain' });
    expect((await postForm(s, Buffer.from('hello'), 'text/plain')).status).toBe(204);
    let r = await as(a, 'POST', s.confirmUrl, { size: 5 });
    expect(r.status).toBe(200);
    const recorded = await r.json();
    // S3 accepts a policy-valid POST again until the form expires: the uploader replaces the bytes.
    const forged = 'HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 22\r\n\r\n<script>evil()</script';
    const replaced = Buffer.from(`hello${forged}`);
    const up = await postForm(s, replaced, 'text/plain');
    expect(up.status).toBe(204);
    const s3Etag = up.headers.get('etag');
    expect(s3Etag).not.toBe(`"${recorded.etag}"`);

    const path = `/api/storage/buckets/up/objects/${s.key}`;
    const auth = Object.entries(a)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    const got = await pipelined(t.url, [
      `GET ${path} HTTP/1.1\r\nHost: x\r\n${auth}\r\n`,
      'GET /api/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    ]);
    expect(got.map((x) => x.status)).toEqual([200, 200]);
    expect(got[0]!.headers['content-length']).toBe(String(replaced.length));
    expect(got[0]!.headers.etag).toBe(s3Etag);
    expect(got[0]!.body.equals(replaced)).toBe(true);
    expect(got[1]!.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(got[1]!.body.toString())).toMatchObject({ status: 'ok', service: 'plinth' });

    // HEAD, ranges and If-None-Match describe the same bytes; the metadata keeps the confirmed upload.
    r = await t.fetch(path, { method: 'HEAD', headers: a });
    expect([r.headers.get('content-length'), r.headers.get('etag')]).toEqual([String(replaced.length), s3Etag]);
    // A range is resolved against the recorded size (5), but Content-Range states what is sent.
    r = await t.fetch(path, { headers: { ...a, range: 'bytes=3-' } });
    expect(r.status).toBe(206);
    expect(r.headers.get('content-range')).toBe(`bytes 3-4/${replaced.length}`);
    expect(await r.text()).toBe('lo');
    expect((await t.fetch(path, { headers: { ...a, 'if-none-match': s3Etag! } })).status).toBe(304);
    r = await t.fetch(path, { headers: { ...a, 'if-none-match': `"${recorded.etag}"` } });
    expect(r.status).toBe(200);
    expect(Buffer.from(await r.arrayBuffer()).equals(replaced)).toBe(true);
    const list = await (await t.json('GET', '/api/storage/buckets/up/objects')).json();
    expect(list.data.find((o: { key: string }) => o.key === s.key)).toMatchObject({ size: 5, etag: recorded.etag });
  });

  it('two concurrent confirms, right and wrong size, leave a consistent state', async () => {
    for (let round = 0; round < 5; round++) {
      const s = await strategy(a, { filename: `race-${round}.txt`, contentType: 'text/plain' });
      expect((await postForm(s, Buffer.from('hello'), 'text/plain')).status).toBe(204);
      const [right, wrong] = await Promise.all([
        as(a, 'POST', s.confirmUrl, { size: 5 }),
        as(a, 'POST', s.confirmUrl, { size: 9 }),
      ]);
      const wrongBody = await wrong.json();
      const read = await t.fetch(`/api/storage/buckets/up/objects/${s.key}`, { headers: a });
      const { rows } = await t.deps.db.query('select 1 from storage.objects where bucket = $1 and key = $2', [
        'up',
        s.key,
      ]);
      if (right.status === 200) {
        // The right one went first: the object is recorded and whole; the other removed nothing.
        expect(read.status).toBe(200);
        expect(await read.text()).toBe('hello');
        expect(rows.length).toBe(1);
        expect(wrong.status).toBe(400);
        expect(wrongBody.error).toBe('UPLOAD_MISMATCH');
        expect(wrongBody.message).not.toMatch(/removed/);
      } else {
        // The wrong one went first: the upload is gone everywhere, and the other is told so.
        expect([right.status, (await right.json()).error]).toEqual([404, 'UPLOAD_NOT_FOUND']);
        expect([wrong.status, wrongBody.error]).toEqual([400, 'UPLOAD_MISMATCH']);
        expect(wrongBody.message).toMatch(/removed/);
        expect(read.status).toBe(404);
        expect(rows.length).toBe(0);
        await expect(t.deps.storage.driver.head('up', s.key)).rejects.toThrow();
      }
    }
  });

  it('uploads never confirmed are removed a day after they expire', async () => {
    const s = await strategy(a, { filename: 'abandoned.txt', contentType: 'text/plain' });
    expect((await postForm(s, Buffer.from('left behind'), 'text/plain')).status).toBe(204);
    await t.deps.db.query(`update storage.uploads set expires_at = now() - interval '2 days' where key = $1`, [s.key]);
    await strategy(a, { filename: 'next.txt' }); // sweeps
    await expect(t.deps.storage.driver.head('up', s.key)).rejects.toThrow();
    const r = await as(a, 'POST', s.confirmUrl, { size: 11 });
    expect(r.status).toBe(404);
  });

  it('a key nobody asked an upload for cannot be confirmed', async () => {
    const r = await as(a, 'POST', '/api/storage/buckets/up/objects/never/asked.txt/confirm-upload', { size: 1 });
    expect(r.status).toBe(404);
  });
});

describe('S3 presigned upload over MAX_UPLOAD_BYTES', () => {
  let t: StorageTestApp;
  beforeAll(async () => {
    t = await startStorageApp('embedded', 's3', { MAX_UPLOAD_BYTES: '1024' });
    await t.createBucket('small');
  });
  afterAll(async () => t?.close());

  it('is refused at confirm (413) and removed from S3', async () => {
    let r = await t.json('POST', '/api/storage/buckets/small/upload-strategy', { filename: 'big.bin', size: 2048 });
    expect(r.status).toBe(413);
    r = await t.json('POST', '/api/storage/buckets/small/upload-strategy', { filename: 'big.bin' });
    const s: UploadStrategy = await r.json();
    const policy = JSON.parse(Buffer.from(s.fields.Policy!, 'base64').toString());
    expect(policy.conditions).toContainEqual(['content-length-range', 0, 1024]);
    // A real S3 refuses this POST by its policy; s3rver stores it, so confirm must catch it.
    expect((await postForm(s, Buffer.alloc(2048), 'application/octet-stream')).status).toBe(204);
    r = await t.json('POST', s.confirmUrl, { size: 2048 });
    expect(r.status).toBe(413);
    await expect(t.deps.storage.driver.head('small', s.key)).rejects.toThrow();
  });
});
