import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SpawnBackoff } from './backoff.js';

describe('SpawnBackoff', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** How long starts are held back now, in ms (to the nearest 100). */
  const heldFor = (b: SpawnBackoff): number => {
    let ms = 0;
    while (b.waiting) {
      vi.advanceTimersByTime(100);
      ms += 100;
    }
    return ms;
  };

  it('holds nothing back before a failure', () => {
    expect(new SpawnBackoff().waiting).toBe(false);
  });

  it('waits 200 ms after the first failure, doubling up to 5 s', () => {
    const b = new SpawnBackoff();
    const waits: number[] = [];
    for (let i = 0; i < 7; i++) {
      b.failed();
      waits.push(heldFor(b));
    }
    expect(waits).toEqual([200, 400, 800, 1600, 3200, 5000, 5000]);
  });

  it('starts again from 200 ms once a process started', () => {
    const b = new SpawnBackoff();
    b.failed();
    b.failed();
    heldFor(b);
    b.succeeded();
    b.failed();
    expect(heldFor(b)).toBe(200);
  });
});
