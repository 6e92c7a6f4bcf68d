// Hostile input: traversal, oversize and malformed uploads, wrong buckets, bogus confirms,
// aborted uploads. Each is a clear 4xx with the error envelope, and nothing is stored.
import { existsSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { jsonLines } from '../helpers/log.js';
import { startStorageApp, type StorageTestApp } from './helpers.js';

const LIMIT = 256 * 1024;

interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A request with the path exactly as given (fetch would normalise "..") and an optional body. */
function raw(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string | number> = {},
  body?: Buffer | string,
  agent?: http.Agent,
): Promise<RawResponse> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, method, path, headers, agent }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (data += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: data }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function form(
  boundary: string,
  parts: Array<{ name: string; filename?: string; type?: string; data: string | Buffer }>,
  close = true,
): Buffer {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disp = `form-data; name="${p.name}"${p.filename ? `; filename="${p.filename}"` : ''}`;
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: ${disp}\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ''}\r\n`,
      ),
    );
    chunks.push(Buffer.isBuffer(p.data) ? p.data : Buffer.from(p.data));
    chunks.push(Buffer.from('\r\n'));
  }
  if (close) chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

const B = 'XyZboundary123';
const MP = { 'content-type': `multipart/form-data; boundary=${B}` };

describe.each(backends())('storage hostile input (%s)', (backend) => {
  let t: StorageTestApp;
  let admin: Record<string, string>;
  let base: string;

  const stored = async () => {
    const { rows } = await t.deps.db.query<{ key: string }>(
      `select key from storage.objects where bucket = 'h' order by key`,
    );
    return { keys: rows.map((r) => r.key), files: t.localFiles(), temp: t.localTemp() };
  };
  let before: Awaited<ReturnType<typeof stored>>;
  const expectNothingStored = async () => {
    // A failed store removes its temp file just before the answer goes out; allow a moment
    // (up to 5 s: a loaded machine can be slow to run the cleanup).
    for (let i = 0; i < 250 && t.localTemp().length; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await stored()).toEqual(before);
  };
  const expectError = (r: RawResponse, status: number, code?: string) => {
    expect(r.status).toBe(status);
    const body = JSON.parse(r.body);
    expect(body).toEqual({
      statusCode: status,
      error: code ?? expect.any(String),
      message: expect.any(String),
      nextActions: expect.any(String),
    });
  };

  /** Waits (up to 15 s) for `cond`, polling: the test waits for an event, never a set time. */
  const until = async (cond: () => boolean) => {
    for (let i = 0; i < 750 && !cond(); i++) await new Promise((r) => setTimeout(r, 20));
  };
  /**
   * Starts a raw PUT of `size` bytes and sends its first KiB; resolves once the store has
   * begun (its temp file exists, so the bucket was checked), with `finish` to send the rest.
   */
  const startUpload = async (bucket: string, key: string, size: number) => {
    const u = new URL(base);
    const req = http.request({
      host: u.hostname,
      port: u.port,
      method: 'PUT',
      path: `/api/storage/buckets/${bucket}/objects/${key}`,
      headers: { ...admin, 'content-type': 'application/octet-stream', 'content-length': size },
    });
    const answer = new Promise<RawResponse>((resolve, reject) => {
      req.on('response', (res) => {
        let data = '';
        res.on('data', (d) => (data += d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: data }));
      });
      req.on('error', reject);
    });
    req.write(Buffer.alloc(1024, 7));
    await until(() => t.localTemp().length > 0);
    expect(t.localTemp()).toHaveLength(1);
    return { finish: () => (req.end(Buffer.alloc(size - 1024, 7)), answer) };
  };
  const log = jsonLines();

  beforeAll(async () => {
    t = await startStorageApp(
      backend,
      'local',
      { MAX_UPLOAD_BYTES: String(LIMIT), LOG_LEVEL: 'info' },
      { logStream: log.stream },
    );
    admin = t.admin;
    base = t.url;
    await t.createBucket('h');
    expect((await t.upload('h', { key: 'existing.txt', data: 'keep me' })).status).toBe(200);
  });
  afterAll(async () => t?.close());
  beforeEach(async () => {
    for (let i = 0; i < 250 && t.localTemp().length; i++) await new Promise((r) => setTimeout(r, 20));
    before = await stored();
    expect(before.temp).toEqual([]);
  });

  describe('path traversal and bad keys', () => {
    it.each([
      '..',
      '../x',
      'a/../../x',
      '%2e%2e/x',
      '%2E%2E%2F%2E%2E%2Fetc%2Fpasswd',
      '..%2F..%2Fetc%2Fpasswd',
      '..%5C..%5Cwindows',
      '%2Fetc%2Fpasswd',
      '/etc/passwd',
      'a%00b',
      'a%5Cb',
      'a//b',
      './x',
      'a/./b',
      'a/',
      'a%0Ab',
      '%ZZ',
      '%C0%AE%C0%AE/x',
    ])('PUT and GET of key %s are refused (400)', async (key) => {
      const path = `/api/storage/buckets/h/objects/${key}`;
      const put = await raw(base, 'PUT', path, { ...admin, 'content-type': 'text/plain' }, 'evil');
      expect(put.status).toBe(400);
      // Malformed percent-encoding is refused by the router itself before any route runs.
      if (!['%ZZ', '%C0%AE%C0%AE/x'].includes(key)) expect(JSON.parse(put.body).error).toBe('INVALID_KEY');
      const get = await raw(base, 'GET', path);
      expect([400, 404]).toContain(get.status);
      await expectNothingStored();
    });

    it.each(['../../escape.txt', '/abs.txt', 'a\\b', 'nul\u0000.txt', '.'])(
      'the multipart path field %j is refused',
      async (p) => {
        const r = await raw(
          base,
          'POST',
          '/api/storage/buckets/h/objects',
          { ...admin, ...MP },
          form(B, [
            { name: 'path', data: p },
            { name: 'file', filename: 'f.txt', data: 'evil' },
          ]),
        );
        expectError(r, 400, 'INVALID_KEY');
        await expectNothingStored();
      },
    );
  });

  describe('size limit (MAX_UPLOAD_BYTES)', () => {
    it('accepts exactly the limit', async () => {
      const r = await raw(
        base,
        'PUT',
        '/api/storage/buckets/h/objects/exact.bin',
        { ...admin, 'content-type': 'application/octet-stream' },
        Buffer.alloc(LIMIT, 1),
      );
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body).size).toBe(LIMIT);
      await t.json('DELETE', '/api/storage/buckets/h/objects/exact.bin');
    });

    it('refuses a declared Content-Length over the limit before reading', async () => {
      const r = await raw(
        base,
        'PUT',
        '/api/storage/buckets/h/objects/big.bin',
        { ...admin, 'content-type': 'application/octet-stream' },
        Buffer.alloc(LIMIT + 1),
      );
      expectError(r, 413, 'PAYLOAD_TOO_LARGE');
      await expectNothingStored();
    });

    it('refuses a chunked raw body that grows past the limit, and the connection stays usable', async () => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const r = await new Promise<RawResponse>((resolve, reject) => {
          const u = new URL(base);
          const req = http.request(
            {
              host: u.hostname,
              port: u.port,
              method: 'PUT',
              path: '/api/storage/buckets/h/objects/chunked.bin',
              headers: { ...admin, 'content-type': 'application/octet-stream' },
              agent,
            },
            (res) => {
              let data = '';
              res.on('data', (d) => (data += d));
              res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: data }));
            },
          );
          req.on('error', reject);
          // No Content-Length: chunked, so only counting while streaming can catch it.
          for (let i = 0; i < 16; i++) req.write(Buffer.alloc(64 * 1024, 2));
          req.end();
        });
        expectError(r, 413, 'PAYLOAD_TOO_LARGE');
        await expectNothingStored();
        const next = await raw(base, 'GET', '/api/storage/buckets/h/objects/existing.txt', {}, undefined, agent);
        expect(next.status).toBe(200);
        expect(next.body).toBe('keep me');
      } finally {
        agent.destroy();
      }
    });

    it('cuts the connection of a refused upload that keeps on sending', async () => {
      const u = new URL(base);
      const agent = new http.Agent({ keepAlive: true });
      const MB = 1024 * 1024;
      let status = 0;
      let sent = 0;
      await new Promise<void>((resolve) => {
        const req = http.request({
          host: u.hostname,
          port: u.port,
          method: 'PUT',
          path: '/api/storage/buckets/h/objects/endless.bin',
          headers: { ...admin, 'content-type': 'application/octet-stream' },
          agent,
        });
        req.on('response', (res) => {
          status = res.statusCode!;
          res.resume();
        });
        req.on('error', () => {});
        req.on('close', () => resolve());
        req.on('socket', (sock) => sock.on('close', () => resolve()));
        const chunk = Buffer.alloc(MB);
        const pump = () => {
          while (sent < 256 && !req.destroyed && req.write(chunk)) sent++;
          if (req.destroyed) return;
          if (sent >= 256) return void req.end();
          req.once('drain', () => {
            sent++;
            pump();
          });
        };
        pump();
      });
      agent.destroy();
      // The server reads ~16 MiB past the refusal, then closes: the client never gets to send it all.
      expect(sent).toBeLessThan(256);
      expect([0, 413]).toContain(status);
      await expectNothingStored();
      expect((await t.fetch('/api/health')).status).toBe(200);
    });

    it('refuses an oversize multipart file (POST and PUT), and a replaced object stays intact', async () => {
      const body = form(B, [{ name: 'file', filename: 'big.bin', data: Buffer.alloc(LIMIT + 10, 3) }]);
      // Send chunked so the declared length cannot short-cut the check.
      for (const [method, path] of [
        ['POST', '/api/storage/buckets/h/objects'],
        ['PUT', '/api/storage/buckets/h/objects/existing.txt'],
      ]) {
        const r = await raw(base, method!, path!, { ...admin, ...MP, 'transfer-encoding': 'chunked' }, body);
        expectError(r, 413, 'PAYLOAD_TOO_LARGE');
        await expectNothingStored();
      }
      expect(await (await t.fetch('/api/storage/buckets/h/objects/existing.txt')).text()).toBe('keep me');
    });
  });

  describe('malformed multipart', () => {
    it.each<[string, Record<string, string>, Buffer | string, string]>([
      ['no boundary', { 'content-type': 'multipart/form-data' }, 'whatever', 'INVALID_MULTIPART'],
      ['garbage body', MP, 'this is not a multipart body at all', 'INVALID_MULTIPART'],
      ['no file field', MP, form(B, [{ name: 'path', data: 'x.txt' }]), 'INVALID_MULTIPART'],
      [
        'file in another field',
        MP,
        form(B, [{ name: 'upload', filename: 'x.txt', data: 'data' }]),
        'INVALID_MULTIPART',
      ],
      [
        'truncated file part',
        MP,
        form(B, [{ name: 'file', filename: 'x.txt', data: 'partial data' }], false).subarray(0, 120),
        'INVALID_MULTIPART',
      ],
      [
        'path after file',
        MP,
        form(B, [
          { name: 'file', filename: 'x.txt', data: 'data' },
          { name: 'path', data: 'late.txt' },
        ]),
        'INVALID_MULTIPART',
      ],
      [
        'too many parts',
        MP,
        form(
          B,
          Array.from({ length: 60 }, (_, i) => ({ name: `f${i}`, data: 'v' })),
        ),
        'INVALID_MULTIPART',
      ],
      [
        'a huge text field',
        MP,
        form(B, [
          { name: 'path', data: 'p'.repeat(100_000) },
          { name: 'file', filename: 'x.txt', data: 'd' },
        ]),
        'INVALID_MULTIPART',
      ],
      ['JSON instead of a form', { 'content-type': 'application/json' }, '{"file":"x"}', 'UNSUPPORTED_MEDIA_TYPE'],
    ])('POST with %s is refused', async (_name, headers, body, code) => {
      const r = await raw(base, 'POST', '/api/storage/buckets/h/objects', { ...admin, ...headers }, body);
      expectError(r, code === 'UNSUPPORTED_MEDIA_TYPE' ? 415 : 400, code);
      await expectNothingStored();
    });

    it('PUT with a truncated file part stores nothing and keeps the old object', async () => {
      const body = form(
        B,
        [{ name: 'file', filename: 'x.txt', data: 'replacement that never completes' }],
        false,
      ).subarray(0, 150);
      const r = await raw(base, 'PUT', '/api/storage/buckets/h/objects/existing.txt', { ...admin, ...MP }, body);
      expectError(r, 400, 'INVALID_MULTIPART');
      await expectNothingStored();
      expect(await (await t.fetch('/api/storage/buckets/h/objects/existing.txt')).text()).toBe('keep me');
    });
  });

  it('an upload the client abandons midway leaves nothing behind', async () => {
    const u = new URL(base);
    await new Promise<void>((resolve) => {
      const req = http.request({
        host: u.hostname,
        port: u.port,
        method: 'PUT',
        path: '/api/storage/buckets/h/objects/abandoned.bin',
        headers: { ...admin, 'content-type': 'application/octet-stream', 'content-length': String(LIMIT) },
      });
      req.on('error', () => resolve());
      req.write(Buffer.alloc(64 * 1024));
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 200);
    });
    for (let i = 0; i < 250 && t.localTemp().length; i++) await new Promise((r) => setTimeout(r, 20));
    await expectNothingStored();
  });

  it('a form upload whose key the driver refuses (a segment over 255 bytes) is a 400, and the server lives on', async () => {
    // The driver refuses before reading the file part; the form's stream then fails unread.
    const r = await t.upload('h', { key: `${'s'.repeat(300)}/x.txt`, data: 'x'.repeat(64 * 1024) });
    expect(r.status).toBe(400);
    expect((await r.json()).error).toBe('INVALID_KEY');
    expect((await t.fetch('/api/health')).status).toBe(200);
    await expectNothingStored();
  });

  it('a client that breaks off a raw upload gets 400, logged once at info (not as a server error)', async () => {
    const u = new URL(base);
    const id = `broken-off-${backend}`;
    const sock = net.connect(Number(u.port), u.hostname);
    let answer = '';
    sock.on('data', (d) => (answer += d));
    const closed = new Promise((r) => sock.on('close', r));
    sock.write(
      `PUT /api/storage/buckets/h/objects/broken.bin HTTP/1.1\r\nHost: x\r\nx-api-key: ${admin['x-api-key']}\r\nx-request-id: ${id}\r\n` +
        'Content-Type: application/octet-stream\r\nContent-Length: 1000\r\n\r\nabc',
    );
    // The server has the request before the client breaks off. (Waiting for a temp file here
    // waited its whole 15 s each time: a 3-byte start of a body makes none.)
    const arrived = () => log.lines.some((l) => l.reqId === id && l.msg === 'incoming request');
    await until(arrived);
    expect(arrived()).toBe(true);
    sock.end();
    await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 400 [\s\S]*"MALFORMED_REQUEST"/);
    // The request's own log line about its failure (anything but "incoming request").
    const about = () => log.lines.filter((l) => l.reqId === id && l.msg !== 'incoming request');
    await until(() => about().length > 0);
    expect(about()).toEqual([expect.objectContaining({ level: 30, code: 'MALFORMED_REQUEST' })]);
    await expectNothingStored();
  });

  describe('a bucket deleted while an upload into it streams', () => {
    it.each([false, true])(
      'answers 404, removes the bytes and leaves nothing of the bucket on disk (replacing an object: %s)',
      async (replacing) => {
        await t.createBucket('del_x');
        if (replacing) expect((await t.upload('del_x', { key: 'slow.bin', data: 'old' })).status).toBe(200);
        const upload = await startUpload('del_x', 'slow.bin', 200_000);
        expect((await t.json('DELETE', '/api/storage/buckets/del_x')).status).toBe(200);
        expectError(await upload.finish(), 404, 'BUCKET_NOT_FOUND');
        await expectNothingStored();
        expect(existsSync(path.join(t.dataDir, 'storage', 'del_x'))).toBe(false);
        expect((await t.deps.db.query(`select 1 from storage.objects where bucket = 'del_x'`)).rows).toEqual([]);
      },
    );

    it('a bucket re-created under the same name meanwhile takes the upload and keeps its own objects', async () => {
      await t.createBucket('del_y');
      const upload = await startUpload('del_y', 'slow.bin', 200_000);
      expect((await t.json('DELETE', '/api/storage/buckets/del_y')).status).toBe(200);
      await t.createBucket('del_y');
      expect((await t.upload('del_y', { key: 'new.txt', data: 'new bucket' })).status).toBe(200);
      const r = await upload.finish();
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body)).toMatchObject({ bucket: 'del_y', key: 'slow.bin', size: 200_000 });
      expect(
        t
          .localFiles()
          .filter((f) => f.startsWith('del_y/'))
          .sort(),
      ).toEqual(['del_y/new.txt', 'del_y/slow.bin']);
      expect(await (await t.fetch('/api/storage/buckets/del_y/objects/new.txt')).text()).toBe('new bucket');
      expect((await t.json('DELETE', '/api/storage/buckets/del_y')).status).toBe(200);
    });
  });

  it.each([
    ['POST', '/api/storage/buckets/h/objects/existing.txt/download-strategy', '[]'],
    ['POST', '/api/storage/buckets/h/objects/existing.txt/download-strategy', '[{"expiresIn":60}]'],
    ['POST', '/api/storage/buckets/h/objects/existing.txt/download-strategy', 'null'],
    ['POST', '/api/storage/buckets/h/objects/existing.txt/download-strategy', '"x"'],
    ['POST', '/api/storage/buckets/h/objects/existing.txt/confirm-upload', '[{"size":7}]'],
    ['POST', '/api/storage/buckets/h/objects/existing.txt/confirm-upload', 'null'],
    ['POST', '/api/storage/buckets', '[{"bucketName":"arr"}]'],
    ['PATCH', '/api/storage/buckets/h', '[{"isPublic":true}]'],
    ['POST', '/api/storage/buckets/h/upload-strategy', '[{"filename":"a.txt"}]'],
  ])('%s %s with the JSON body %s (not an object) is 400', async (method, path, body) => {
    const r = await raw(base, method, path, { ...admin, 'content-type': 'application/json' }, body);
    expectError(r, 400, 'INVALID_INPUT');
    await expectNothingStored();
  });

  it.each([
    ['PUT', '/api/storage/buckets/nope/objects/x.txt'],
    ['POST', '/api/storage/buckets/nope/objects'],
  ])('%s into a missing bucket is 404 and stores nothing', async (method, path) => {
    const r = await raw(
      base,
      method,
      path,
      { ...admin, ...MP },
      form(B, [{ name: 'file', filename: 'x.txt', data: 'data' }]),
    );
    expectError(r, 404, 'BUCKET_NOT_FOUND');
    expect(t.localFiles().filter((f) => f.startsWith('nope/'))).toEqual([]);
  });

  it('without PUBLIC_URL, a Host header that is not a plain host[:port] builds no link (400); a plain one is used as is', async () => {
    const strategy = (host: string) =>
      raw(
        base,
        'POST',
        '/api/storage/buckets/h/upload-strategy',
        { ...admin, host, 'content-type': 'application/json' },
        '{"filename":"a.txt"}',
      );
    for (const host of ['evil.example/phish?', 'user@evil.example', 'a b', 'evil.example#x', '[::1']) {
      expectError(await strategy(host), 400, 'INVALID_INPUT');
    }
    const plain = await strategy('files.example:8443');
    expect(plain.status).toBe(200);
    expect(JSON.parse(plain.body).uploadUrl).toMatch(
      /^http:\/\/files\.example:8443\/api\/storage\/buckets\/h\/objects\//,
    );
    await expectNothingStored();
  });

  it('a bucket name that is not valid is a 400 on every route', async () => {
    for (const [method, path] of [
      ['GET', '/api/storage/buckets/bad.name/objects/x'],
      ['PUT', '/api/storage/buckets/bad.name/objects/x'],
      ['DELETE', '/api/storage/buckets/bad.name'],
    ]) {
      const r = await raw(base, method!, path!, admin);
      expect(r.status).toBe(400);
    }
  });

  it('confirm-upload of an object never uploaded is 404, of a wrong size 400', async () => {
    let r = await raw(
      base,
      'POST',
      '/api/storage/buckets/h/objects/never.txt/confirm-upload',
      { ...admin, 'content-type': 'application/json' },
      '{"size":5}',
    );
    expectError(r, 404, 'UPLOAD_NOT_FOUND');
    r = await raw(
      base,
      'POST',
      '/api/storage/buckets/h/objects/existing.txt/confirm-upload',
      { ...admin, 'content-type': 'application/json' },
      '{"size":999}',
    );
    expectError(r, 400, 'UPLOAD_MISMATCH');
    r = await raw(
      base,
      'POST',
      '/api/storage/buckets/h/objects/existing.txt/confirm-upload',
      { ...admin, 'content-type': 'application/json' },
      '{"size":"many"}',
    );
    expectError(r, 400, 'INVALID_INPUT');
    r = await raw(
      base,
      'POST',
      '/api/storage/buckets/h/objects/existing.txt/confirm-upload',
      { ...admin, 'content-type': 'application/json' },
      '{}',
    );
    expectError(r, 400, 'INVALID_INPUT');
    r = await raw(
      base,
      'POST',
      '/api/storage/buckets/h/objects/existing.txt/something-else',
      { ...admin, 'content-type': 'application/json' },
      '{}',
    );
    expectError(r, 404);
    await expectNothingStored();
  });
});
