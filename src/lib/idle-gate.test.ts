import { describe, expect, it } from 'vitest';
import { IdleGate } from './idle-gate.js';

describe('IdleGate', () => {
  it('rests while there is nothing to do, asks again only after its interval, and wakes at once', async () => {
    let asked = 0;
    let nothing = true;
    const gate = new IdleGate(async () => {
      asked++;
      return nothing;
    }, 50);
    expect(await gate.due()).toBe(false);
    expect(await gate.due()).toBe(false);
    expect(asked).toBe(1);
    gate.wake();
    expect(await gate.due()).toBe(true);
    expect(asked).toBe(1);
    await new Promise((r) => setTimeout(r, 60));
    nothing = false;
    expect(await gate.due()).toBe(true);
    expect(asked).toBe(2);
  });

  it('polls when the check fails (a database error is no reason to stop working)', async () => {
    const gate = new IdleGate(async () => {
      throw new Error('down');
    });
    expect(await gate.due()).toBe(true);
  });
});
