import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RenditionCache } from './renditions.js';

const dirs: string[] = [];
const fresh = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'plinth-renditions-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('RenditionCache', () => {
  it('stays within its bytes on disk, evicting the least recently used', async () => {
    const dir = fresh();
    const c = new RenditionCache(dir, 3000);
    await c.put('a', Buffer.alloc(1000, 1));
    await c.put('b', Buffer.alloc(1000, 2));
    await c.put('c', Buffer.alloc(1000, 3));
    expect((await c.get('a'))?.[0]).toBe(1); // a is now the most recently used
    await c.put('d', Buffer.alloc(1000, 4));
    expect(c.size).toBeLessThanOrEqual(3000);
    expect(readdirSync(dir).sort()).toEqual(['a', 'c', 'd']);
  });

  it('serves from disk after a restart, indexes what it finds and removes half-written files', async () => {
    const dir = fresh();
    await new RenditionCache(dir, 10_000).put('kept', Buffer.from('bytes'));
    writeFileSync(path.join(dir, '.half-written'), 'x');
    const c = new RenditionCache(dir, 10_000);
    expect((await c.get('kept'))?.toString()).toBe('bytes');
    expect(await c.get('missing')).toBeNull();
    expect(readdirSync(dir)).toEqual(['kept']);
    expect(c.size).toBe(5);
  });

  it('keeps nothing on disk with a zero budget (memory only)', async () => {
    const dir = fresh();
    const c = new RenditionCache(dir, 0);
    await c.put('x', Buffer.from('held'));
    expect((await c.get('x'))?.toString()).toBe('held');
    expect(readdirSync(dir)).toEqual([]);
  });
});
