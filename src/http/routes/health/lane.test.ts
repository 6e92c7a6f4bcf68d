import { afterEach, describe, expect, it, vi } from 'vitest';
import { healthLane, liveness } from './index.js';

describe('healthLane', () => {
  afterEach(() => vi.useRealTimers());

  it("answers the route's JSON text with the time of the answer, shared within one millisecond", () => {
    vi.useFakeTimers({ now: Date.UTC(2026, 10, 29, 8, 0, 0, 1) });
    const lane = healthLane('9.9.9 "quoted"');
    const first = lane.body();
    expect(first).toBe(JSON.stringify(liveness('9.9.9 "quoted"')()));
    expect(JSON.parse(first)).toEqual({
      status: 'ok',
      service: 'plinth',
      version: '1.5.1',
      plinthVersion: '9.9.9 "quoted"',
      timestamp: '2026-11-29T08:00:00.001Z',
    });
    expect(lane.body()).toBe(first);
    vi.advanceTimersByTime(1);
    expect(lane.body()).toBe(JSON.stringify(liveness('9.9.9 "quoted"')()));
    expect(JSON.parse(lane.body()).timestamp).toBe('2026-11-29T08:00:00.002Z');
    expect(lane.counted).toBe(true);
  });
});
