// vitest globalSetup: ONE embedded Postgres cluster for the whole run (initdb once, in a temp
// dir removed at the end). Tests reach it through PLINTH_TEST_EMBEDDED_URL (its `postgres`
// database); `freshDb('embedded')` creates a database of its own on it per test app.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startCluster, type EmbeddedCluster } from '../../src/db/embedded/index.js';
import { skipNotice } from './skips.js';

/** Test-only settings: more connections (many apps at once), no durability (a throwaway cluster). */
export const TEST_CLUSTER_SETTINGS = {
  max_connections: '300',
  shared_buffers: '64MB',
  fsync: 'off',
  synchronous_commit: 'off',
  full_page_writes: 'off',
};

let cluster: EmbeddedCluster | null = null;
let dir = '';

export async function setup(): Promise<void> {
  const skipped = skipNotice();
  if (skipped) console.warn(skipped);
  // Names this run's shared build of the server (helpers/build.ts), removed in teardown.
  process.env.PLINTH_TEST_RUN = String(process.pid);
  dir = mkdtempSync(path.join(tmpdir(), 'plinth-test-pg-'));
  cluster = await startCluster({ dir: path.join(dir, 'postgres'), settings: TEST_CLUSTER_SETTINGS });
  process.env.PLINTH_TEST_EMBEDDED_URL = cluster.url('postgres');
  // Roles are cluster-wide and the first migration creates them if missing: test files
  // migrating their fresh databases at the same moment would race on that (the migration
  // lock is per database), so the run creates them once here, as a long-lived server has them.
  const c = new pg.Client({ connectionString: cluster.url('postgres') });
  await c.connect();
  await c.query('create role anon nologin noinherit; create role authenticated nologin noinherit');
  await c.end();
}

export async function teardown(): Promise<void> {
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
  const build = path.resolve(import.meta.dirname, '../..', `.build-test-${process.pid}`);
  rmSync(build, { recursive: true, force: true });
  rmSync(`${build}.lock`, { recursive: true, force: true });
}
