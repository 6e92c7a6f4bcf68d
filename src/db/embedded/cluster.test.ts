import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { resolveRunAs } from './cluster.js';

const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

describe('the user the embedded Postgres runs as', () => {
  it.skipIf(!asRoot)('as root: an unprivileged user, with the ids `id` gives for it', () => {
    const user = resolveRunAs()!;
    expect(user.uid).toBeGreaterThan(0);
    const id = (flag: string) => Number(execFileSync('id', [flag, user.name]).toString().trim());
    expect({ uid: user.uid, gid: user.gid }).toEqual({ uid: id('-u'), gid: id('-g') });
  });

  it.skipIf(asRoot)('not as root: none (postgres runs as the same user)', () => {
    expect(resolveRunAs()).toBeNull();
  });
});
