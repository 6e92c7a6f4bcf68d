import { describe, expect, it } from 'vitest';
import { KeyLock } from './key-lock.js';

const tick = () => new Promise((r) => setTimeout(r, 1));

describe('KeyLock', () => {
  it('runs the tasks of one key in the order they came, one at a time, and those of others beside them', async () => {
    const lock = new KeyLock();
    const log: string[] = [];
    let running = 0;
    const task = (name: string, ms: number) => async () => {
      running++;
      expect(running).toBeLessThanOrEqual(2); // one per key, two keys
      log.push(`start ${name}`);
      await new Promise((r) => setTimeout(r, ms));
      log.push(`end ${name}`);
      running--;
      return name;
    };
    const results = await Promise.all([
      lock.run('a', task('a1', 15)),
      lock.run('a', task('a2', 1)),
      lock.run('b', task('b1', 5)),
      lock.run('a', task('a3', 1)),
    ]);
    expect(results).toEqual(['a1', 'a2', 'b1', 'a3']);
    const a = log.filter((l) => l.includes(' a'));
    expect(a).toEqual(['start a1', 'end a1', 'start a2', 'end a2', 'start a3', 'end a3']);
    expect(log.indexOf('start b1')).toBeLessThan(log.indexOf('end a1'));
    expect(lock.size).toBe(0);
  });

  it('goes on with the next task after one that failed', async () => {
    const lock = new KeyLock();
    const failed = lock.run('k', async () => {
      await tick();
      throw new Error('boom');
    });
    const next = lock.run('k', async () => 'next');
    await expect(failed).rejects.toThrow('boom');
    await expect(next).resolves.toBe('next');
    expect(lock.size).toBe(0);
  });
});
