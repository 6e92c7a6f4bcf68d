// The S3 server stops while an upload streams through Plinth: the upload answers a 502/503
// envelope, no object is recorded without its bytes, and uploads while S3 is down fail fast.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { startS3, type TestS3 } from '../storage/s3server.js';
import { until } from '../helpers/until.js';

const MiB = 1024 * 1024;

describe('the S3 server stopped mid-upload', () => {
  let s3: TestS3;
  let t: TestApp;
  let admin: Record<string, string>;
  let s3Stopped = false;
  beforeAll(async () => {
    s3 = await startS3({ separate: true });
    t = await startApp(undefined, s3.env);
    admin = { 'x-api-key': t.adminKey };
    const r = await t.fetch('/api/storage/buckets', {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ bucketName: 'far' }),
    });
    expect(r.status).toBe(201);
  });
  afterAll(async () => {
    await t?.close();
    if (!s3Stopped) await s3?.stop();
  });

  it('answers 502/503 and records no object without its bytes', async () => {
    const small = new FormData();
    small.append('file', new Blob(['kept']), 'k.txt');
    expect(
      (await t.fetch('/api/storage/buckets/far/objects/kept.txt', { method: 'PUT', headers: admin, body: small }))
        .status,
    ).toBe(200);

    // A 40 MiB multipart body sent 1 MiB at a time; S3 stops once 12 MiB have gone out.
    const boundary = 'faultboundary';
    let sent = 0;
    let stopping: Promise<void> | null = null;
    const chunk = Buffer.alloc(MiB, 1);
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
          ),
        );
      },
      async pull(c) {
        if (sent === 12) {
          s3Stopped = true;
          stopping = s3.stop();
        }
        if (sent >= 40) {
          c.enqueue(Buffer.from(`\r\n--${boundary}--\r\n`));
          c.close();
          return;
        }
        sent++;
        c.enqueue(chunk);
        await new Promise((r) => setTimeout(r, 5));
      },
    });
    const started = Date.now();
    const r = await t
      .fetch('/api/storage/buckets/far/objects/big.bin', {
        method: 'PUT',
        headers: { ...admin, 'content-type': `multipart/form-data; boundary=${boundary}` },
        body,
        duplex: 'half',
        signal: AbortSignal.timeout(30_000),
      } as RequestInit)
      .catch((err: unknown) => err as Error);
    await stopping;
    expect(stopping, 'the upload ended before S3 was stopped').not.toBeNull();
    // Plinth may answer before the whole body arrived and close the request: that answer is
    // what the client gets, or (when the client was still sending) a reset it can retry.
    if (r instanceof Response) {
      expect([502, 503]).toContain(r.status);
      const env = await r.json();
      expect(env).toMatchObject({ statusCode: r.status, error: expect.any(String), nextActions: expect.any(String) });
    } else {
      expect(String(r)).not.toMatch(/timeout|abort/i);
    }
    expect(Date.now() - started).toBeLessThan(25_000);

    // No row without bytes: the object is unknown, the listing holds only the earlier one.
    expect((await t.fetch('/api/storage/buckets/far/objects/big.bin', { headers: admin })).status).toBe(404);
    const list = await (await t.fetch('/api/storage/buckets/far/objects', { headers: admin })).json();
    expect(list.data.map((o: { key: string }) => o.key)).toEqual(['kept.txt']);

    // With S3 still down, a small upload fails fast with an envelope; health says storage is down.
    const again = new FormData();
    again.append('file', new Blob(['x']), 'x.txt');
    const down = await t.fetch('/api/storage/buckets/far/objects/later.txt', {
      method: 'PUT',
      headers: admin,
      body: again,
    });
    expect([502, 503]).toContain(down.status);
    expect((await down.json()).nextActions).toEqual(expect.any(String));
    await until(
      async () =>
        (await (await t.fetch('/api/health?checks=true', { headers: admin })).json()).checks.storage.status === 'down',
      10_000,
      'health to report storage down',
    );
    const after = await (await t.fetch('/api/storage/buckets/far/objects', { headers: admin })).json();
    expect(after.data.map((o: { key: string }) => o.key)).toEqual(['kept.txt']);
  }, 60_000);
});
