import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readMigrations } from './migrate.js';

describe('readMigrations', () => {
  it('reads the real migrations: unique zero-padded prefixes, in order', () => {
    const ms = readMigrations();
    expect(ms.length).toBeGreaterThan(1);
    expect(ms.map((m) => m.id)).toEqual([...ms.map((m) => m.id)].sort());
    expect(new Set(ms.map((m) => m.id)).size).toBe(ms.length);
  });

  it('refuses a duplicate prefix and a malformed name', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'plinth-mig-'));
    try {
      writeFileSync(path.join(dir, '0001_a.sql'), 'select 1;');
      writeFileSync(path.join(dir, '0001_b.sql'), 'select 1;');
      expect(() => readMigrations(dir)).toThrow(/Duplicate migration prefix 0001/);
      rmSync(path.join(dir, '0001_b.sql'));
      writeFileSync(path.join(dir, '2_bad.sql'), 'select 1;');
      expect(() => readMigrations(dir)).toThrow(/NNNN_name/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
