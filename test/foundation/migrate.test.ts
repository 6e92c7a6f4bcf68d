import { afterEach, describe, expect, it } from 'vitest';
import { migrate, readMigrations } from '../../src/db/migrate.js';
import { loadCredentials } from '../../src/auth/credentials.js';
import { backends, freshDb } from '../helpers/db.js';

const NO_OVERRIDES = { adminApiKey: null, anonKey: null, jwtSecret: null };

describe.each(backends())('migrations and credentials (%s)', (backend) => {
  let drop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await drop?.();
    drop = undefined;
  });

  it('apply every migration once; a second start applies nothing and keeps the keys', async () => {
    const fresh = await freshDb(backend);
    drop = fresh.drop;
    const all = readMigrations().map((m) => m.id);
    expect(await migrate(fresh.db)).toEqual(all);
    const first = await loadCredentials(fresh.db, NO_OVERRIDES);
    expect(first.generatedAdminKey).toMatch(/^ik_[0-9a-f]{64}$/);
    expect(first.credentials.isAdminKey(first.generatedAdminKey!)).toBe(true);

    expect(await migrate(fresh.db)).toEqual([]);
    const second = await loadCredentials(fresh.db, NO_OVERRIDES);
    expect(second.generatedAdminKey).toBeNull();
    expect(second.credentials.anonKey).toBe(first.credentials.anonKey);
    expect(second.credentials.jwtSecret).toBe(first.credentials.jwtSecret);
    expect(second.credentials.isAdminKey(first.generatedAdminKey!)).toBe(true);
    // The admin key is stored only as a hash.
    const { rows } = await fresh.db.query<{ value: string }>('select value from system.credentials');
    expect(rows.map((r) => r.value)).not.toContain(first.generatedAdminKey);
  });

  it('environment overrides win over stored credentials', async () => {
    const fresh = await freshDb(backend);
    drop = fresh.drop;
    await migrate(fresh.db);
    const adminApiKey = `ik_${'a1'.repeat(20)}`;
    const { credentials, generatedAdminKey } = await loadCredentials(fresh.db, {
      adminApiKey,
      anonKey: `anon_${'b2'.repeat(20)}`,
      jwtSecret: 'x'.repeat(40),
    });
    expect(generatedAdminKey).toBeNull();
    expect(credentials.isAdminKey(adminApiKey)).toBe(true);
    expect(credentials.anonKey).toBe(`anon_${'b2'.repeat(20)}`);
    expect(credentials.jwtSecret).toBe('x'.repeat(40));
  });

  it('several instances starting at once migrate once and agree on the keys', async () => {
    const fresh = await freshDb(backend);
    const { openPostgres } = await import('../../src/db/postgres.js');
    const others = await Promise.all([openPostgres(fresh.url!), openPostgres(fresh.url!)]);
    drop = async () => {
      for (const o of others) await o.close();
      await fresh.drop();
    };
    const applied = await Promise.all([fresh.db, ...others].map((db) => migrate(db)));
    expect(applied.filter((a) => a.length > 0)).toHaveLength(1);
    const creds = await Promise.all([fresh.db, ...others].map((db) => loadCredentials(db, NO_OVERRIDES)));
    expect(new Set(creds.map((c) => c.credentials.anonKey)).size).toBe(1);
    expect(creds.filter((c) => c.generatedAdminKey).length).toBe(1);
  });
});
