// The default database: with no DATABASE_URL, Plinth initialises and runs its own Postgres
// server under DATA_DIR/postgres, supervises it, and reaches it through the `pg` pool.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alive } from '../../src/lib/process.js';
import type { Db } from '../../src/db/types.js';
import type { EmbeddedCluster } from '../../src/db/embedded/index.js';
import { newAdminKey } from '../../src/auth/credentials.js';
import { startConfiguredApp, type ConfiguredApp } from '../helpers/configured-app.js';

describe('the embedded Postgres default', () => {
  let dataDir: string;
  let t: ConfiguredApp;
  const adminKey = newAdminKey();
  const admin = { 'x-api-key': adminKey, 'content-type': 'application/json' };
  const cluster = () => (t.deps.db as Db & { cluster: EmbeddedCluster }).cluster;
  const sql = async (query: string) => {
    const r = await t.fetch('/api/database/sql', { method: 'POST', headers: admin, body: JSON.stringify({ query }) });
    if (r.status !== 200) throw new Error(`SQL failed (${r.status}): ${await r.text()}`);
    return (await r.json()) as { rows: any[] };
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'plinth-embedded-'));
    t = await startConfiguredApp({
      DATA_DIR: dataDir,
      ADMIN_API_KEY: adminKey,
      LOG_LEVEL: process.env.DEBUG_LOG ? 'error' : 'silent',
    });
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('initialises a UTF-8 cluster with ICU root collation under DATA_DIR/postgres, on a Unix socket only', async () => {
    const dir = path.join(dataDir, 'postgres');
    expect(readFileSync(path.join(dir, 'PG_VERSION'), 'utf8').trim()).toBe('18');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    if (process.getuid?.() === 0) expect(statSync(dir).uid).not.toBe(0); // postgres refuses root
    const { rows } = await sql(
      `select current_setting('listen_addresses') as listen, current_setting('server_encoding') as enc,
              (select datlocprovider from pg_database where datname = current_database()) as provider,
              (select array_agg(w order by w) from unnest(array['Shopping', 'alice', 'Zebra', 'bob', 'Émile']) w) as sorted`,
    );
    expect(rows[0]).toEqual({
      listen: '',
      enc: 'UTF8',
      provider: 'i',
      sorted: ['alice', 'bob', 'Émile', 'Shopping', 'Zebra'],
    });
    expect(existsSync(path.join(dir, '.s.PGSQL.5432'))).toBe(true);
    const health = await (await t.fetch('/api/health?checks=true')).json();
    expect(health.checks.database).toEqual({ status: 'ok', engine: 'embedded' });
  });

  it('a slow query does not block health or other requests', async () => {
    let sleepDone = false;
    const sleeping = sql('select pg_sleep(3)').then(() => (sleepDone = true));
    // Give the sleep a head start: it is running on the server once pg_stat_activity shows it.
    for (;;) {
      const { rows } = await sql(
        `select count(*)::int as n from pg_stat_activity where query = 'select pg_sleep(3)' and state = 'active'`,
      );
      if (rows[0].n > 0) break;
    }
    expect((await t.fetch('/api/health')).status).toBe(200);
    expect((await t.fetch('/api/health?checks=true')).status).toBe(200);
    expect((await sql('select 1 as one')).rows).toEqual([{ one: 1 }]);
    expect(sleepDone).toBe(false);
    await sleeping;
    expect(sleepDone).toBe(true);
  });

  it('postgres killed with SIGKILL under load: 503 envelopes, then restarted and serving again', async () => {
    await sql(`create table public.load_probe (id int primary key); insert into public.load_probe values (1), (2)`);
    const supervisor = cluster().supervisor;
    const pid = supervisor.pid!;
    expect(alive(pid)).toBe(true);
    const statuses: number[] = [];
    const bodies: any[] = [];
    let killed = false;
    let recoveredAfterKill = false;
    const worker = async () => {
      for (let i = 0; i < 2000 && !recoveredAfterKill; i++) {
        const r = await t.fetch('/api/database/records/load_probe', { headers: admin });
        const body = await r.json();
        statuses.push(r.status);
        if (r.status !== 200) bodies.push(body);
        if (killed && r.status === 200 && supervisor.restarts > 0) recoveredAfterKill = true;
        if (r.status !== 200) await new Promise((res) => setTimeout(res, 20));
      }
    };
    const load = Promise.all([worker(), worker(), worker(), worker()]);
    while (statuses.length < 20) await new Promise((r) => setTimeout(r, 10));
    process.kill(pid, 'SIGKILL');
    killed = true;
    await load;
    expect(recoveredAfterKill).toBe(true);
    expect(supervisor.restarts).toBeGreaterThanOrEqual(1);
    expect(supervisor.pid).not.toBe(pid);
    // Every failure during the outage is the 503 envelope, never a 500.
    expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
    for (const b of bodies)
      expect(b).toMatchObject({ statusCode: 503, error: 'DATABASE_UNAVAILABLE', nextActions: expect.any(String) });
    const r = await t.fetch('/api/database/records/load_probe', { headers: admin });
    expect(r.status).toBe(200);
    expect(await r.json()).toHaveLength(2);
  });

  it('close() stops postgres with a fast shutdown: no postmaster left, pid file removed', async () => {
    const pid = cluster().supervisor.pid!;
    await t.close();
    expect(alive(pid)).toBe(false);
    expect(existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
    // A stale postmaster.pid (a crash left it; its pid is long gone) does not stop the next start.
    writeFileSync(
      path.join(dataDir, 'postgres', 'postmaster.pid'),
      `${pid}\n${path.join(dataDir, 'postgres')}\n0\n5432\n`,
    );
    // Starting again on the same DATA_DIR keeps the data.
    t = await startConfiguredApp({
      DATA_DIR: dataDir,
      ADMIN_API_KEY: adminKey,
      LOG_LEVEL: process.env.DEBUG_LOG ? 'error' : 'silent',
    });
    expect((await sql('select count(*)::int as n from public.load_probe')).rows).toEqual([{ n: 2 }]);
  });
});

// As root (CI), postgres runs as a created system user; this checks the other path: Plinth
// run by an ordinary user runs postgres as that same user.
describe.runIf(process.getuid?.() === 0)('the embedded Postgres run by an ordinary user', () => {
  it('initialises, serves and stops under that user', async () => {
    const { execFileSync } = await import('node:child_process');
    const { chownSync } = await import('node:fs');
    const nobody = Number(execFileSync('id', ['-u', 'nobody']).toString().trim());
    const dir = mkdtempSync(path.join(tmpdir(), 'plinth-user-'));
    chownSync(dir, nobody, nobody);
    try {
      const out = execFileSync(
        'runuser',
        [
          '-u',
          'nobody',
          '--',
          process.execPath,
          '--import',
          'tsx',
          'test/helpers/embedded-as-user.ts',
          path.join(dir, 'postgres'),
        ],
        {
          env: { ...process.env, HOME: dir },
        },
      ).toString();
      expect(JSON.parse(out.trim().split('\n').pop()!)).toEqual({ uid: nobody, owner: nobody, rows: [{ one: 1 }] });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
