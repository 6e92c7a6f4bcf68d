// Three instances on one server Postgres (this process and two child processes), a 1-second
// schedule for 20 s: every tick is claimed once and run once, none twice, none missed; after
// the instance that was running jobs is killed (SIGKILL), the others carry on at once.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { until } from '../helpers/until.js';

const SERVER = process.env.TEST_DATABASE_URL;

function child(env: Record<string, string>): Promise<ChildProcess> {
  const p = spawn(process.execPath, ['--import', 'tsx', 'test/schedules/instance-process.ts'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    p.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve(p));
    p.on('exit', (code) => reject(new Error(`instance exited with ${code}`)));
  });
}

describe.skipIf(!SERVER)('schedules exactly once on three instances (server Postgres)', () => {
  let t: TestApp;
  const children: ChildProcess[] = [];
  const hits = new Map<string, number>();
  const server = createServer((req, res) => {
    const due = String(req.headers['x-plinth-due-at']);
    hits.set(due, (hits.get(due) ?? 0) + 1);
    // A run takes a little while, so a kill can land in the middle of one.
    setTimeout(() => res.end('ok'), 150);
  });

  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const env = { OUTBOUND_ALLOW_HOSTS: `127.0.0.1:${port}`, SCHEDULE_TICK_MS: '200' };
    t = await startApp('postgres', env);
    const { rows } = await t.deps.db.query<{ name: string }>('select current_database() as name');
    const u = new URL(SERVER!);
    u.pathname = `/${rows[0]!.name}`;
    const childEnv = {
      ...env,
      PLINTH_TEST_DB_URL: u.toString(),
      PLINTH_TEST_DATA_DIR: t.dataDir,
      PLINTH_TEST_ADMIN_KEY: t.adminKey,
    };
    children.push(...(await Promise.all([child(childEnv), child(childEnv)])));
  }, 60_000);
  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    await t?.close();
    server.close();
  });

  it('runs each tick once across instances, and keeps going when the busy instance is killed', async () => {
    const port = (server.address() as { port: number }).port;
    const created = await call(t, 'POST', '/api/schedules', {
      headers: { 'x-api-key': t.adminKey },
      body: {
        name: 'every second',
        cronSchedule: '1 seconds',
        functionUrl: `http://127.0.0.1:${port}/tick`,
        timeoutSeconds: 2,
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    type Row = { due_at: Date; status: string; instance: string | null; started_at: Date | null };
    const runs = async () =>
      (
        await t.deps.db.query<Row>(
          'select due_at, status, instance, started_at from schedules.runs where schedule_id = $1 order by due_at',
          [id],
        )
      ).rows;

    await new Promise((r) => setTimeout(r, 10_000));
    // Kill the child process that ran the most runs so far.
    const byPid = new Map<number, number>();
    for (const r of await runs())
      if (r.instance)
        byPid.set(Number(r.instance.split('-')[0]), (byPid.get(Number(r.instance.split('-')[0])) ?? 0) + 1);
    const victim = children.sort((a, b) => (byPid.get(b.pid!) ?? 0) - (byPid.get(a.pid!) ?? 0))[0]!;
    expect(byPid.get(victim.pid!) ?? 0).toBeGreaterThan(0);
    victim.kill('SIGKILL');
    const killedAt = Date.now();
    await new Promise((r) => setTimeout(r, 10_000));
    await call(t, 'PATCH', `/api/schedules/${id}`, { headers: { 'x-api-key': t.adminKey }, body: { enabled: false } });
    // A run that was in flight on the killed instance expires and is failed by another one.
    await until(
      async () => (await runs()).every((r) => r.status !== 'running' && r.status !== 'queued'),
      15_000,
      'every run to end',
    );

    const all = await runs();
    const dues = all.map((r) => new Date(r.due_at).getTime());
    expect(all.length).toBeGreaterThanOrEqual(18);
    // One run per tick: consecutive seconds, none missing, none twice (the unique claim).
    for (let i = 1; i < dues.length; i++) expect(dues[i]! - dues[i - 1]!).toBe(1000);
    // Each run reached the receiver at most once.
    for (const n of hits.values()) expect(n).toBe(1);
    const notOk = all.filter((r) => r.status !== 'succeeded');
    expect(notOk.length).toBeLessThanOrEqual(1);
    for (const r of notOk) expect(Number(r.instance?.split('-')[0])).toBe(victim.pid);
    // Work moved: every run due from 1 s after the kill ran elsewhere, on time.
    const after = all.filter((r) => new Date(r.due_at).getTime() > killedAt + 1000);
    expect(after.length).toBeGreaterThanOrEqual(7);
    for (const r of after) {
      expect(r.status).toBe('succeeded');
      expect(Number(r.instance!.split('-')[0])).not.toBe(victim.pid);
      expect(new Date(r.started_at!).getTime() - new Date(r.due_at).getTime()).toBeLessThan(2000);
    }
    const instances = new Set(all.map((r) => r.instance?.split('-')[0]));
    expect(instances.size).toBeGreaterThanOrEqual(2);
  }, 90_000);
});
