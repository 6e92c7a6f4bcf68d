// Uploads and downloads stream: a 200 MiB object goes through Plinth (same process as the
// test) while memory stays flat. One test file per driver, so each measures in a fresh
// process. The 1 GiB run against a spawned server is in bench/storage.ts.
import { createHash } from 'node:crypto';
import http from 'node:http';
import { Readable } from 'node:stream';
import v8 from 'node:v8';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStorageApp, type StorageTestApp } from './helpers.js';

const MiB = 1024 * 1024;

// A full collection before measuring, so garbage from earlier work cannot hide growth.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const SIZE = 200 * MiB;

function source(size: number, hash: ReturnType<typeof createHash>): Readable {
  const block = Buffer.alloc(256 * 1024);
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= size) return void this.push(null);
      const chunk = Buffer.from(block.subarray(0, Math.min(block.length, size - sent)));
      chunk.writeUInt32LE(sent / block.length, 0);
      hash.update(chunk);
      sent += chunk.length;
      this.push(chunk);
    },
  });
}

export function streamingSuite(driver: 'local' | 's3'): void {
  describe(`streaming (${driver} driver)`, () => {
    let t: StorageTestApp;
    beforeAll(async () => {
      // s3rver runs in a child process, so only Plinth (and the test's client) is measured.
      t = await startStorageApp('embedded', driver, { MAX_UPLOAD_BYTES: String(1024 * MiB) }, { separateS3: true });
      await t.createBucket('big');
    });
    afterAll(async () => t?.close());

    it('moves 200 MiB up and down with resident memory growing less than 64 MiB', async () => {
      const u = new URL(t.url);
      const sent = createHash('sha256');
      let peak = 0;
      // Settle first: a small round trip so lazy allocations are not counted.
      await t.upload('big', { key: 'warm', data: 'x' });
      await (await t.fetch('/api/storage/buckets/big/objects/warm')).text();
      // RSS rarely shrinks, so a second run in this process starts high; heap + external
      // (where Buffers live) shows buffering whatever ran before.
      const live = () => {
        const m = process.memoryUsage();
        return m.heapUsed + m.external;
      };
      gc();
      const base = process.memoryUsage().rss;
      const liveBase = live();
      let livePeak = 0;
      const timer = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage().rss);
        livePeak = Math.max(livePeak, live());
      }, 25);
      try {
        const put = await new Promise<{ status: number; body: string }>((resolve, reject) => {
          const req = http.request(
            {
              host: u.hostname,
              port: u.port,
              method: 'PUT',
              path: '/api/storage/buckets/big/objects/large/file.bin',
              headers: { ...t.admin, 'content-type': 'application/octet-stream' },
            },
            (res) => {
              let body = '';
              res.on('data', (d) => (body += d));
              res.on('end', () => resolve({ status: res.statusCode!, body }));
            },
          );
          req.on('error', reject);
          source(SIZE, sent).pipe(req);
        });
        expect(put.status).toBe(200);
        expect(JSON.parse(put.body).size).toBe(SIZE);
        const got = createHash('sha256');
        let received = 0;
        await new Promise<void>((resolve, reject) => {
          http.get(
            { host: u.hostname, port: u.port, path: '/api/storage/buckets/big/objects/large/file.bin' },
            (res) => {
              expect(res.headers['content-length']).toBe(String(SIZE));
              res.on('data', (d: Buffer) => {
                received += d.length;
                got.update(d);
              });
              res.on('end', resolve);
              res.on('error', reject);
            },
          );
        });
        expect(received).toBe(SIZE);
        expect(got.digest('hex')).toBe(sent.digest('hex'));
      } finally {
        clearInterval(timer);
      }
      const growthMiB = (peak - base) / MiB;
      const liveGrowthMiB = (livePeak - liveBase) / MiB;
      console.log(
        `streaming 200 MiB up+down (${driver}): RSS ${Math.round(base / MiB)} → peak ${Math.round(peak / MiB)} MiB (+${growthMiB.toFixed(1)}), heap+external +${liveGrowthMiB.toFixed(1)} MiB`,
      );
      // The S3 driver holds its two 8 MiB part buffers by design (on top of the 64 MiB budget of
      // the local driver); the rest is socket chunks not yet collected, in Plinth and in the
      // test's own client, which share this process.
      const budget = driver === 's3' ? 64 + 16 : 64;
      expect(growthMiB).toBeLessThan(budget);
      // Live heap + external also counts garbage not yet collected in this fork (shared with
      // other test files: 50–80 MiB seen): twice the budget, still far below the 200 MiB that
      // holding the file whole would take.
      expect(liveGrowthMiB).toBeLessThan(2 * budget);
    });
  });
}
