// Schedules over HTTP on each backend: the API's shapes, bad input answered with the envelope,
// HTTP and SQL targets with secrets in headers, and the policies (overlap skip, timeout, retries).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { until } from '../helpers/until.js';

interface Hit {
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A loopback receiver that records every request; `delayMs` holds each answer. */
async function receiver(
  delayMs = 0,
  status = 200,
): Promise<{
  url: string;
  hits: Hit[];
  server: Server;
  port: number;
  set: (o: { delayMs?: number; status?: number }) => void;
}> {
  const hits: Hit[] = [];
  const state = { delayMs, status };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      hits.push({ url: req.url!, headers: req.headers, body });
      setTimeout(() => res.writeHead(state.status).end('pong'), state.delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}`, hits, server, port, set: (o) => Object.assign(state, o) };
}

describe.each(backends())('schedules (%s)', (backend) => {
  let t: TestApp;
  let rx: Awaited<ReturnType<typeof receiver>>;
  const admin = () => ({ 'x-api-key': t.adminKey });
  const post = (body: unknown) => call(t, 'POST', '/api/schedules', { headers: admin(), body });
  const runs = async (id: string) =>
    (await call(t, 'GET', `/api/schedules/${id}/runs`, { headers: admin() })).body as any[];

  beforeAll(async () => {
    rx = await receiver();
    t = await startApp(backend, { OUTBOUND_ALLOW_HOSTS: `127.0.0.1:${rx.port}`, SCHEDULE_TICK_MS: '100' });
  });
  afterAll(async () => {
    await t?.close();
    rx?.server.close();
  });

  it("creates, lists, patches and deletes a schedule in InsForge's shape; admin only", async () => {
    const created = await post({
      name: 'daily',
      cronSchedule: '0 9 * * *',
      functionUrl: `${rx.url}/x`,
      httpMethod: 'POST',
      headers: { a: 'b' },
      body: { k: 1 },
      timezone: 'Europe/Paris',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: expect.any(String),
      name: 'daily',
      cronSchedule: '0 9 * * *',
      timezone: 'Europe/Paris',
      enabled: true,
      functionUrl: `${rx.url}/x`,
      body: { k: 1 },
    });
    expect(new Date(created.body.nextRunAt).getTime()).toBeGreaterThan(Date.now());
    const id = created.body.id;
    expect((await call(t, 'GET', '/api/schedules', { headers: admin() })).body.map((s: any) => s.id)).toContain(id);
    expect((await call(t, 'GET', '/api/schedules', { headers: { apikey: t.anonKey } })).body.error).toBe('FORBIDDEN');
    const patched = await call(t, 'PATCH', `/api/schedules/${id}`, { headers: admin(), body: { enabled: false } });
    expect(patched.body).toMatchObject({ enabled: false, nextRunAt: null });
    const sql = await call(t, 'PATCH', `/api/schedules/${id}`, {
      headers: admin(),
      body: { sql: 'select 1', enabled: true },
    });
    expect(sql.body).toMatchObject({ sql: 'select 1', functionUrl: null, enabled: true });
    expect((await call(t, 'DELETE', `/api/schedules/${id}`, { headers: admin() })).status).toBe(200);
    expect((await call(t, 'GET', `/api/schedules/${id}`, { headers: admin() })).body.error).toBe('SCHEDULE_NOT_FOUND');
  });

  it.each([
    [{ name: 'x', cronSchedule: '61 * * * *', sql: 'select 1' }, 400, 'INVALID_CRON'],
    [{ name: 'x', cronSchedule: '* * *', sql: 'select 1' }, 400, 'INVALID_CRON'],
    [{ name: 'x', cronSchedule: '90 seconds', sql: 'select 1' }, 400, 'INVALID_CRON'],
    [{ name: 'x', cronSchedule: '* * * * *', timezone: 'Mars/Olympus', sql: 'select 1' }, 400, 'INVALID_TIMEZONE'],
    [{ name: 'x', cronSchedule: '* * * * *', functionSlug: 'no-such-fn' }, 404, 'FUNCTION_NOT_FOUND'],
    [{ name: 'x', cronSchedule: '* * * * *', functionUrl: 'http://10.0.0.1/hook' }, 400, 'OUTBOUND_NOT_ALLOWED'],
    [
      { name: 'x', cronSchedule: '* * * * *', functionUrl: 'http://169.254.169.254/latest/meta-data' },
      400,
      'OUTBOUND_NOT_ALLOWED',
    ],
    [{ name: 'x', cronSchedule: '* * * * *', functionUrl: 'http://127.0.0.1:1/' }, 400, 'OUTBOUND_NOT_ALLOWED'],
    [{ name: 'x', cronSchedule: '* * * * *' }, 400, 'INVALID_INPUT'],
    [
      { name: 'x', cronSchedule: '* * * * *', sql: 'select 1', functionUrl: 'https://example.com' },
      400,
      'INVALID_INPUT',
    ],
    [{ cronSchedule: '* * * * *', sql: 'select 1' }, 400, 'INVALID_INPUT'],
  ])('refuses %j with %i %s', async (body, status, error) => {
    const r = await post(body);
    expect(r.status).toBe(status);
    expect(r.body).toMatchObject({
      statusCode: status,
      error,
      message: expect.any(String),
      nextActions: expect.any(String),
    });
  });

  it('runs an HTTP target every second with a secret in a header, recording each run newest first', async () => {
    expect(
      (await call(t, 'PUT', '/api/secrets/HOOK_TOKEN', { headers: admin(), body: { value: 's3cret-value' } })).status,
    ).toBeLessThan(300);
    const s = (
      await post({
        name: 'tick',
        cronSchedule: '1 seconds',
        functionUrl: `${rx.url}/tick`,
        headers: { authorization: 'Bearer ${{secrets.HOOK_TOKEN}}' },
        body: { hello: 'world' },
      })
    ).body;
    await until(async () => rx.hits.filter((h) => h.url === '/tick').length >= 3, 10_000, 'three runs');
    await call(t, 'PATCH', `/api/schedules/${s.id}`, { headers: admin(), body: { enabled: false } });
    const hit = rx.hits.find((h) => h.url === '/tick')!;
    expect(hit.headers.authorization).toBe('Bearer s3cret-value');
    expect(JSON.parse(hit.body)).toEqual({ hello: 'world' });
    await until(
      async () => (await runs(s.id)).every((r) => r.status !== 'queued' && r.status !== 'running'),
      5000,
      'runs to finish',
    );
    const list = await runs(s.id);
    expect(list.length).toBeGreaterThanOrEqual(3);
    expect(list[0]).toMatchObject({
      status: 'succeeded',
      startedAt: expect.any(String),
      durationMs: expect.any(Number),
      output: '200 pong',
    });
    const dues = list.map((r) => Date.parse(r.dueAt));
    expect([...dues].sort((a, b) => b - a)).toEqual(dues);
    expect((await call(t, 'GET', `/api/schedules/${s.id}/logs`, { headers: admin() })).body.length).toBe(list.length);
  });

  it('runs SQL as the owner, runs now on demand, and records a SQL error', async () => {
    await call(t, 'POST', '/api/database/sql', {
      headers: admin(),
      body: { query: 'create table public.ticks (id serial primary key, at timestamptz default now())' },
    });
    const s = (await post({ name: 'sql', cronSchedule: '0 0 1 1 *', sql: 'insert into public.ticks default values' }))
      .body;
    const run = await call(t, 'POST', `/api/schedules/${s.id}/run`, { headers: admin() });
    expect(run.status).toBe(202);
    expect(run.body).toMatchObject({ scheduleId: s.id, trigger: 'manual', status: 'queued' });
    await until(async () => (await runs(s.id))[0]?.status === 'succeeded', 5000, 'the manual run');
    expect(
      (
        await call(t, 'POST', '/api/database/sql', {
          headers: admin(),
          body: { query: 'select count(*)::int as n from public.ticks' },
        })
      ).body.rows[0].n,
    ).toBe(1);
    const bad = (await post({ name: 'bad', cronSchedule: '0 0 1 1 *', sql: 'select * from no_such_table' })).body;
    await call(t, 'POST', `/api/schedules/${bad.id}/run`, { headers: admin() });
    await until(async () => (await runs(bad.id))[0]?.status === 'failed', 5000, 'the failed run');
    expect((await runs(bad.id))[0].error).toMatch(/no_such_table/);
    // As the owner role, not the superuser: what admin SQL may not do, a schedule may not either.
    const who = (
      await post({
        name: 'who',
        cronSchedule: '0 0 1 1 *',
        sql: 'select current_user as u, (select rolsuper from pg_roles where rolname = current_user) as su',
      })
    ).body;
    await call(t, 'POST', `/api/schedules/${who.id}/run`, { headers: admin() });
    await until(async () => (await runs(who.id))[0]?.status === 'succeeded', 5000, 'the owner run');
    expect(JSON.parse((await runs(who.id))[0].output).rows[0]).toMatchObject({
      u: expect.stringMatching(/^plinth_owner_/),
      su: false,
    });
  });

  it('skips a run due while the previous one still goes, stops a run at its timeout, and retries by setting', async () => {
    rx.set({ delayMs: 2500 });
    const slow = (
      await post({
        name: 'slow',
        cronSchedule: '1 seconds',
        functionUrl: `${rx.url}/slow`,
        timeoutSeconds: 1,
        retries: 1,
      })
    ).body;
    await until(
      async () => (await runs(slow.id)).filter((r) => r.status === 'failed' && r.attempts === 2).length >= 1,
      15_000,
      'a timed-out run retried once',
    );
    await until(async () => (await runs(slow.id)).some((r) => r.status === 'skipped'), 10_000, 'a skipped run');
    await call(t, 'PATCH', `/api/schedules/${slow.id}`, { headers: admin(), body: { enabled: false } });
    rx.set({ delayMs: 0 });
    const failed = (await runs(slow.id)).find((r) => r.status === 'failed')!;
    expect(failed.error).toMatch(/timed out|abort/i);
    expect((await runs(slow.id)).find((r) => r.status === 'skipped')!.error).toMatch(/still going/);
  });

  it('after every instance was down, runs one catch-up run (policy "one") or none ("none")', async () => {
    const one = (await post({ name: 'one', cronSchedule: '0 0 1 1 *', sql: 'select 1', catchUp: 'one' })).body;
    const none = (await post({ name: 'none', cronSchedule: '0 0 1 1 *', sql: 'select 1', catchUp: 'none' })).body;
    // As if the servers were down for a minute of a 1-second schedule.
    for (const s of [one, none]) {
      await t.deps.db.query(
        `update schedules.schedules set cron = '* * * * * *', next_due_at = now() - interval '60 seconds' where id = $1`,
        [s.id],
      );
    }
    await until(
      async () => (await runs(one.id)).some((r) => r.trigger === 'catch-up' && r.status === 'succeeded'),
      5000,
      'the catch-up run',
    );
    await until(async () => (await runs(none.id)).length >= 1, 5000, 'a run of the "none" schedule');
    for (const s of [one, none])
      await call(t, 'PATCH', `/api/schedules/${s.id}`, { headers: admin(), body: { enabled: false } });
    const oneRuns = await runs(one.id);
    expect(oneRuns.filter((r) => r.trigger === 'catch-up')).toHaveLength(1);
    expect(oneRuns.length).toBeLessThan(15);
    expect((await runs(none.id)).filter((r) => r.trigger === 'catch-up')).toHaveLength(0);
  });

  it('runs a function by slug as the admin, with the run in the headers', async () => {
    const code =
      'export default async (req) => new Response(req.headers.get("x-plinth-role") + " " + (await req.text()))';
    expect(
      (await call(t, 'POST', '/api/functions', { headers: admin(), body: { name: 'Cron fn', slug: 'cron-fn', code } }))
        .status,
    ).toBe(201);
    const s = (await post({ name: 'fn', cronSchedule: '@yearly', functionSlug: 'cron-fn', body: { n: 1 } })).body;
    await call(t, 'POST', `/api/schedules/${s.id}/run`, { headers: admin() });
    await until(
      async () => ['succeeded', 'failed'].includes((await runs(s.id))[0]?.status),
      30_000,
      'the function run',
    );
    expect((await runs(s.id))[0]).toMatchObject({ status: 'succeeded', output: '200 admin {"n":1}' });
    // A call no HTTP request made keeps a functions line of its own (warm HTTP calls are counted: docs/logs.md).
    const lines = (await t.deps.logs.read({ sources: ['functions'], limit: 1000 })).logs;
    const own = lines.filter((l) => l.body.slug === 'cron-fn' && l.body.count === undefined);
    expect(own.map((l) => [l.body.status, l.body.requestId])).toEqual([[200, null]]);
  });

  it('shows the job queue depth and its bounds in the health checks', async () => {
    const h = await call(t, 'GET', '/api/health?checks=true');
    expect(h.body.checks.jobs).toMatchObject({
      status: 'ok',
      queued: expect.any(Number),
      active: expect.any(Number),
      maxQueued: '100000',
      scheduleRunRetentionDays: '7',
    });
  });
});
