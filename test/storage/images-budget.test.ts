// What one image render may cost (issue #40): a 7000×7000 PNG read as AVIF at quality 100 with
// no width is refused at once (output pixels), AVIF quality is capped (one rendition for every
// quality above 80), a render past IMAGE_RENDER_SECONDS is stopped by ending its process, and
// renders past the bound of renders at once and waiting are 503 with Retry-After.
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flatPng, startStorageApp, type StorageTestApp } from './helpers.js';

/** A side×side PNG of noise: costly to encode, whatever the format. */
function noisePng(side: number): Promise<Buffer> {
  const raw = Buffer.alloc(side * side * 3);
  let x = 12345;
  for (let i = 0; i < raw.length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    raw[i] = x >>> 24;
  }
  return sharp(raw, { raw: { width: side, height: side, channels: 3 } })
    .png({ compressionLevel: 1 })
    .toBuffer();
}

describe('the cost of one image render', () => {
  let t: StorageTestApp;
  const put = async (key: string, body: Buffer) => {
    const r = await t.fetch(`/api/storage/buckets/img/objects/${key}`, {
      method: 'PUT',
      headers: { ...t.admin, 'content-type': 'image/png' },
      body: new Uint8Array(body),
    });
    expect(r.status).toBe(200);
  };
  const get = (key: string, query: string) => t.fetch(`/api/storage/buckets/img/objects/${key}?${query}`);

  beforeAll(async () => {
    t = await startStorageApp('embedded', 'local', {
      IMAGE_RENDER_SECONDS: '1',
      IMAGE_CONCURRENT_RENDERS: '1',
      IMAGE_RENDER_QUEUE: '1',
    });
    const made = await t.fetch('/api/storage/buckets', {
      method: 'POST',
      headers: { ...t.admin, 'content-type': 'application/json' },
      body: JSON.stringify({ bucketName: 'img', isPublic: true }),
    });
    expect(made.status).toBe(201);
    await put('big.png', flatPng(7000));
    await put('noise.png', await noisePng(2048));
    await put('small.png', await noisePng(128));
  }, 60_000);
  afterAll(async () => t?.close());

  it('refuses a 7000×7000 AVIF at quality 100 with no width at once, saying what to ask for', async () => {
    const started = Date.now();
    const r = await get('big.png', 'format=avif&quality=100');
    const body = await r.json();
    expect(Date.now() - started).toBeLessThan(5000);
    expect(r.status).toBe(422);
    expect(body).toMatchObject({
      statusCode: 422,
      error: 'IMAGE_TOO_LARGE',
      message: expect.stringContaining('7000×7000'),
      nextActions: expect.stringMatching(/width/),
    });
    // JPEG, PNG and WebP have a larger budget than AVIF (4096 × 4096), but not 49 Mpx either.
    const webp = await get('big.png', 'format=webp');
    expect([webp.status, (await webp.json()).message]).toEqual([
      422,
      expect.stringContaining('IMAGE_MAX_OUTPUT_PIXELS'),
    ]);
  });

  it('caps AVIF quality: every quality above 80 is the same rendition', async () => {
    const a = await get('small.png', 'format=avif&width=64&quality=100');
    const b = await get('small.png', 'format=avif&width=64&quality=80');
    expect([a.status, b.status]).toEqual([200, 200]);
    expect((await sharp(Buffer.from(await a.arrayBuffer())).metadata()).width).toBe(64);
    expect(a.headers.get('etag')).toBe(b.headers.get('etag'));
    const c = await get('small.png', 'format=avif&width=64&quality=60');
    expect(c.status).toBe(200);
    expect(c.headers.get('etag')).not.toBe(a.headers.get('etag'));
  });

  it('stops a render past IMAGE_RENDER_SECONDS by ending its process, and refuses the same transform again at once', async () => {
    const pool = t.deps.images.pool;
    const before = pool.stats.timeouts;
    const started = Date.now();
    const r = await get('noise.png', 'format=avif&width=2048&quality=80');
    expect(r.status).toBe(422);
    expect(await r.json()).toMatchObject({
      statusCode: 422,
      error: 'IMAGE_TOO_COSTLY',
      message: expect.stringContaining('1 s'),
      nextActions: expect.any(String),
    });
    expect(Date.now() - started).toBeLessThan(8000);
    expect(pool.stats.timeouts).toBe(before + 1);
    // The process that rendered it is gone (SIGKILL), not left encoding in the background.
    const killed = pool.lastKilled!;
    const alive = () => {
      try {
        process.kill(killed, 0);
        return true;
      } catch {
        return false;
      }
    };
    await expect.poll(alive, { timeout: 5000, interval: 20 }).toBe(false);
    // Refused at once: from memory, with no render process started and no render timed out.
    const { started: startedBefore, timeouts: timeoutsBefore } = pool.stats;
    expect((await get('noise.png', 'format=avif&width=2048&quality=80')).status).toBe(422);
    expect([pool.stats.started, pool.stats.timeouts]).toEqual([startedBefore, timeoutsBefore]);
    // The pool renders on afterwards.
    expect((await get('noise.png', 'format=jpeg&width=64')).status).toBe(200);
  });

  it('answers 503 IMAGE_BUSY with Retry-After past the renders at once and waiting', async () => {
    // One render at once, one waiting: of four costly renders asked together, two are refused.
    const rs = await Promise.all(
      [1, 2, 3, 4].map((i) => get('noise.png', `format=webp&width=${2000 + i}&quality=${90 + i}`)),
    );
    const busy = rs.filter((r) => r.status === 503);
    expect(busy.length).toBeGreaterThanOrEqual(2);
    expect(busy[0]!.headers.get('retry-after')).toBe('2');
    expect(await busy[0]!.json()).toMatchObject({
      statusCode: 503,
      error: 'IMAGE_BUSY',
      nextActions: expect.stringContaining('Retry-After'),
    });
  });
});
