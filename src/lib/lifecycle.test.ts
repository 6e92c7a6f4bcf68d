import { describe, expect, it } from 'vitest';
import { Lifetime } from './lifecycle.js';

describe('Lifetime', () => {
  it('stops the parts last first, once, a failure not stopping the rest', async () => {
    const life = new Lifetime();
    const stopped: string[] = [];
    life.onClose(async () => stopped.push('db'));
    life.onClose(async () => {
      throw new Error('broken');
    });
    life.onClose(async () => stopped.push('storage'));
    await life.close();
    await life.close();
    expect(stopped).toEqual(['storage', 'db']);
  });

  it('keeps the health probes by name, in order, and refuses a name twice', () => {
    const life = new Lifetime();
    life.health('database', { run: async () => {}, required: true });
    life.health('redis', { run: async () => {}, required: false });
    expect(Object.keys(life.checks)).toEqual(['database', 'redis']);
    expect(() => life.health('redis', { run: async () => {}, required: false })).toThrow(/twice/);
  });
});
