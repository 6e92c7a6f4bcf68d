import { describe, expect, it } from 'vitest';
import { LogBuffer } from './buffer.js';
import type { LogRecord } from './types.js';

const line = (n: number): LogRecord => ({
  time: Date.now(),
  source: 'api',
  level: 'info',
  message: `line ${n}`,
  fields: { n },
});

describe('LogBuffer', () => {
  it('never waits on the store: a store that hangs keeps push synchronous and bounded, dropping the oldest', async () => {
    const batches: LogRecord[][] = [];
    let release!: () => void;
    const hung = new Promise<void>((r) => (release = r));
    const buffer = new LogBuffer(
      async (b) => {
        batches.push(b);
        await hung;
      },
      { maxPending: 100, batchSize: 10, flushMs: 1 },
    );
    buffer.push(line(0));
    await new Promise((r) => setTimeout(r, 20)); // the first batch is now stuck in the store
    const started = performance.now();
    for (let i = 1; i <= 1000; i++) buffer.push(line(i));
    expect(performance.now() - started).toBeLessThan(50);
    expect(buffer.size).toBeLessThanOrEqual(100);
    expect(buffer.stats.dropped).toBeGreaterThanOrEqual(900);
    release();
    await buffer.close();
    // What survived is the newest lines, in order.
    const written = batches.flat().map((r) => r.fields.n as number);
    expect(written.at(-1)).toBe(1000);
    expect(written.slice(1)).toEqual([...written.slice(1)].sort((a, b) => a - b));
    expect(buffer.stats.written).toBe(written.length);
  });

  it('writes in batches and counts a failed batch as dropped, then recovers', async () => {
    let fail = true;
    const sizes: number[] = [];
    const buffer = new LogBuffer(
      async (b) => {
        if (fail) throw new Error('database down');
        sizes.push(b.length);
      },
      { batchSize: 4, flushMs: 1 },
    );
    for (let i = 0; i < 3; i++) buffer.push(line(i));
    await buffer.flush();
    expect(buffer.stats).toMatchObject({ dropped: 3, failedBatches: 1, lastError: 'database down' });
    fail = false;
    for (let i = 0; i < 10; i++) buffer.push(line(i));
    await buffer.close();
    expect(sizes).toEqual([4, 4, 2]);
    expect(buffer.stats).toMatchObject({ written: 10, lastError: null });
  });

  it('writes a full batch at once, not after the timer, and one batch at a time', async () => {
    const sizes: number[] = [];
    let release!: () => void;
    const buffer = new LogBuffer(
      async (b) => {
        sizes.push(b.length);
        await new Promise<void>((r) => (release = r));
      },
      { batchSize: 10, flushMs: 60_000 },
    );
    for (let i = 0; i < 9; i++) buffer.push(line(i));
    await new Promise((r) => setImmediate(r));
    expect(sizes).toEqual([]); // less than a batch waits for its timer
    buffer.push(line(9));
    for (let i = 10; i < 35; i++) buffer.push(line(i)); // the push stays an append: nothing written yet
    expect(sizes).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(sizes).toEqual([10]); // the first full batch left in the next turn, the rest wait for it
    release();
    const done = buffer.flush();
    for (let k = 0; k < 5; k++) {
      await new Promise((r) => setTimeout(r, 5));
      release();
    }
    await done;
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(35);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(10);
    await buffer.close();
  });

  it('drops a deferred line whose function throws, counts it, and stores the others', async () => {
    const stored: LogRecord[] = [];
    const errors: unknown[] = [];
    const buffer = new LogBuffer(
      async (b) => {
        stored.push(...b);
      },
      { flushMs: 60_000, onError: (e) => errors.push(e) },
    );
    buffer.push(line(1));
    buffer.push(() => {
      throw new Error('bad line');
    });
    buffer.push(() => line(3));
    await buffer.flush();
    expect(stored.map((r) => r.fields.n)).toEqual([1, 3]);
    expect(buffer.stats).toMatchObject({ written: 2, dropped: 1 });
    expect(errors).toHaveLength(1);
    await buffer.close();
  });
});
