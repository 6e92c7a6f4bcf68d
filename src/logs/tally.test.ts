import { afterEach, describe, expect, it, vi } from 'vitest';
import { LineTally, type TallySummary } from './tally.js';
import type { LogRecord } from './types.js';

const MINUTE = 60_000;
const T0 = Date.UTC(2026, 10, 29, 8, 0, 0);

function tally() {
  const stored: TallySummary[] = [];
  const describe = (s: TallySummary): LogRecord => ({
    time: s.to,
    source: 'api',
    level: 'info',
    message: '',
    fields: { ...s },
  });
  const t = new LineTally(describe, (r) => stored.push(r.fields as unknown as TallySummary));
  return { t, stored };
}

describe('LineTally', () => {
  afterEach(() => vi.useRealTimers());

  it('stores one line per clock minute, when the minute ends, with count, percentiles and the last id', () => {
    vi.useFakeTimers({ now: T0 + 10_000 });
    const { t, stored } = tally();
    for (let i = 1; i <= 100; i++) t.add(T0 + 10_000 + i, i / 100, `r${i}`, i % 2 ? '10.0.0.1' : '10.0.0.2');
    t.add(T0 + 20_000, 25, 'slow', '10.0.0.1');
    expect(stored).toEqual([]);
    vi.advanceTimersByTime(MINUTE - 10_000 - 1);
    expect(stored).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(stored).toEqual([
      {
        count: 101,
        from: T0 + 10_001,
        to: T0 + 20_000,
        p50Ms: 0.51,
        p99Ms: 1,
        maxMs: 25,
        lastRequestId: 'slow',
        ips: ['10.0.0.1', '10.0.0.2'],
      },
    ]);
    // Nothing counted since: no line at the next minute's end, nor at take.
    vi.advanceTimersByTime(MINUTE);
    t.take();
    expect(stored).toHaveLength(1);
  });

  it("closes the minute when the next minute's answer comes first, and at take", () => {
    vi.useFakeTimers({ now: T0 });
    const { t, stored } = tally();
    t.add(T0 + 59_000, 1, 'a', undefined);
    t.add(T0 + MINUTE + 5, 2, 'b', undefined);
    expect(stored.map((s) => [s.count, s.lastRequestId])).toEqual([[1, 'a']]);
    t.take();
    t.add(T0 + MINUTE + 10, 3, 'c', undefined);
    t.take();
    expect(stored.map((s) => [s.count, s.lastRequestId, s.maxMs])).toEqual([
      [1, 'a', 1],
      [1, 'b', 2],
      [1, 'c', 3],
    ]);
  });

  it('keeps percentiles near the durations above 10 ms, never above the maximum, and at most 5 addresses', () => {
    vi.useFakeTimers({ now: T0 });
    const { t, stored } = tally();
    for (let i = 0; i < 98; i++) t.add(T0, 150, 'x', `10.0.0.${i}`);
    t.add(T0, 4000, 'x', undefined);
    t.add(T0, 123_456, 'x', undefined);
    t.take();
    const [s] = stored;
    expect(s!.p50Ms).toBeGreaterThan(148);
    expect(s!.p50Ms).toBeLessThanOrEqual(150);
    expect(s!.p99Ms).toBeGreaterThan(3950);
    expect(s!.p99Ms).toBeLessThanOrEqual(4000);
    expect(s!.maxMs).toBe(123_456);
    expect(s!.ips).toHaveLength(5);
  });
});
