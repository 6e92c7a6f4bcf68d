// Database webhooks over HTTP on each backend: Supabase's payload, Standard Webhooks
// signatures, every change fires whatever wrote it, column filters, bad input, retries while
// the receiver is down, the delivery log, redelivery, and no change lost when Plinth stops
// between the commit and the delivery.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { backends } from '../helpers/db.js';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { until } from '../helpers/until.js';
import { loadConfig } from '../../src/config/index.js';
import { buildDeps } from '../../src/deps.js';
import { openPostgres } from '../../src/db/postgres.js';

interface Got {
  headers: IncomingHttpHeaders;
  raw: string;
  body: any;
}

async function receiver() {
  const got: Got[] = [];
  const state = { status: 200, hang: false };
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      if (state.hang) return; // never answers
      if (state.status === 200) got.push({ headers: req.headers, raw, body: JSON.parse(raw) });
      res.writeHead(state.status).end(state.status === 200 ? 'thanks' : 'down');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}/hook`, port, got, state, close: () => server.close() };
}

describe.each(backends())('database webhooks (%s)', (backend) => {
  let t: TestApp;
  let rx: Awaited<ReturnType<typeof receiver>>;
  const admin = () => ({ 'x-api-key': t.adminKey });
  const sql = (query: string) => call(t, 'POST', '/api/database/sql', { headers: admin(), body: { query } });
  const hook = (body: unknown) => call(t, 'POST', '/api/database/webhooks', { headers: admin(), body });
  const deliveries = async (id: string) =>
    (await call(t, 'GET', `/api/database/webhooks/${id}/deliveries?limit=500`, { headers: admin() })).body as any[];

  beforeAll(async () => {
    rx = await receiver();
    t = await startApp(backend, {
      OUTBOUND_ALLOW_HOSTS: `127.0.0.1:${rx.port}`,
      WEBHOOK_RETRY_DELAY_SECONDS: '1',
      WEBHOOK_MAX_ATTEMPTS: '4',
      WEBHOOK_MAX_PAYLOAD_BYTES: '4096',
      WEBHOOK_TIMEOUT_MS: '1000',
    });
    await call(t, 'POST', '/api/database/tables', {
      headers: admin(),
      body: {
        tableName: 'notes',
        rlsEnabled: true,
        columns: [
          { name: 'owner', type: 'uuid', nullable: true },
          { name: 'body', type: 'string', nullable: true },
          { name: 'tag', type: 'string', nullable: true },
        ],
      },
    });
    await sql(
      `create policy own on public.notes for all to authenticated using (owner = auth.uid()) with check (owner = auth.uid())`,
    );
  });
  afterAll(async () => {
    await t?.close();
    rx?.close();
  });
  // Each test starts with no hooks and an empty inbox, whatever the one before left.
  beforeEach(async () => {
    for (const h of (await call(t, 'GET', '/api/database/webhooks', { headers: admin() })).body)
      await call(t, 'DELETE', `/api/database/webhooks/${h.id}`, { headers: admin() });
    rx.got.length = 0;
    rx.state.status = 200;
    rx.state.hang = false;
  });

  it("delivers every change, whoever made it, in Supabase's shape with a valid Standard Webhooks signature", async () => {
    const created = await hook({ name: 'notes', table: 'notes', events: ['INSERT', 'UPDATE', 'DELETE'], url: rx.url });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: expect.any(String),
      table: 'notes',
      events: ['INSERT', 'UPDATE', 'DELETE'],
      enabled: true,
    });
    expect(created.body.secret).toMatch(/^whsec_/);
    expect(
      (await call(t, 'GET', `/api/database/webhooks/${created.body.id}`, { headers: admin() })).body.secret,
    ).toBeUndefined();
    const user = await createTestUser(t);
    // Through the records API as a user (RLS), and through admin SQL.
    const ins = await call(t, 'POST', '/api/database/records/notes', {
      token: user.token,
      body: [{ owner: user.userId, body: 'from api' }],
      headers: { prefer: 'return=representation' },
    });
    expect(ins.status).toBeLessThan(300);
    await sql(`update public.notes set body = 'edited' where body = 'from api'`);
    await sql(`delete from public.notes where body = 'edited'`);
    await until(async () => rx.got.length >= 3, 10_000, 'three deliveries');
    // Deliveries run in parallel: no order between them.
    const byType = (type: string) => rx.got.find((g) => g.body.type === type);
    const [a, b, c] = [byType('INSERT'), byType('UPDATE'), byType('DELETE')];
    expect(a!.body).toMatchObject({
      type: 'INSERT',
      table: 'notes',
      schema: 'public',
      record: { body: 'from api', owner: user.userId },
      old_record: null,
    });
    expect(b!.body).toMatchObject({ type: 'UPDATE', record: { body: 'edited' }, old_record: { body: 'from api' } });
    expect(c!.body).toMatchObject({ type: 'DELETE', record: null, old_record: { body: 'edited' } });
    const wh = new Webhook(created.body.secret);
    for (const g of rx.got) expect(() => wh.verify(g.raw, g.headers as Record<string, string>)).not.toThrow();
    expect(() =>
      new Webhook(`whsec_${Buffer.from('wrong-secret-wrong-secret').toString('base64')}`).verify(
        a!.raw,
        a!.headers as Record<string, string>,
      ),
    ).toThrow();
    const log = await deliveries(created.body.id);
    expect(log).toHaveLength(3);
    expect(log[0]).toMatchObject({ status: 'succeeded', attempts: 1, responseStatus: 200, responseBody: 'thanks' });
    await call(t, 'DELETE', `/api/database/webhooks/${created.body.id}`, { headers: admin() });
    rx.got.length = 0;
  });

  it('a many-row statement fires one delivery per row and hook (statement-level INSERT/DELETE triggers)', async () => {
    const a = (await hook({ name: 'many-a', table: 'notes', events: ['INSERT', 'DELETE'], url: rx.url })).body;
    const b = (await hook({ name: 'many-b', table: 'notes', events: ['INSERT'], url: rx.url })).body;
    await sql(`insert into public.notes (body, tag) select 'many ' || i, 'many' from generate_series(1, 5) i`);
    await sql(`delete from public.notes where tag = 'many'`);
    await until(async () => rx.got.length >= 15, 10_000, 'fifteen deliveries');
    const inserts = rx.got.filter((g) => g.body.type === 'INSERT');
    expect(inserts).toHaveLength(10);
    expect(new Set(inserts.map((g) => g.body.record.body))).toEqual(new Set([1, 2, 3, 4, 5].map((i) => `many ${i}`)));
    for (const g of inserts) expect(g.body).toMatchObject({ table: 'notes', schema: 'public', old_record: null });
    const deletes = rx.got.filter((g) => g.body.type === 'DELETE');
    expect(deletes.map((g) => g.body.old_record.body).sort()).toEqual([1, 2, 3, 4, 5].map((i) => `many ${i}`));
    expect(deletes.every((g) => g.body.record === null)).toBe(true);
    expect(await deliveries(a.id)).toHaveLength(10);
    expect(await deliveries(b.id)).toHaveLength(5);
    // The last hook gone, the table has no webhook trigger left.
    for (const h of [a, b]) await call(t, 'DELETE', `/api/database/webhooks/${h.id}`, { headers: admin() });
    const left = await sql(
      `select tgname from pg_trigger where tgrelid = 'public.notes'::regclass and tgname like 'plinth_webhooks%'`,
    );
    expect(left.body.rows ?? left.body).toHaveLength(0);
  });

  it('fires UPDATE only when a filtered column changed, truncates a huge record, and refuses bad input', async () => {
    const h = (
      await hook({ name: 'tags', table: 'notes', events: ['UPDATE', 'INSERT'], columns: ['tag'], url: rx.url })
    ).body;
    await sql(`insert into public.notes (body, tag) values ('x', 'a')`);
    await sql(`update public.notes set body = 'y' where tag = 'a'`);
    await sql(`update public.notes set tag = 'b' where tag = 'a'`);
    await sql(`insert into public.notes (body) values (repeat('z', 5000000))`);
    await until(async () => rx.got.length >= 3, 10_000, 'three deliveries');
    await new Promise((r) => setTimeout(r, 500));
    expect(rx.got.map((g) => g.body.type).sort()).toEqual(['INSERT', 'INSERT', 'UPDATE']);
    expect(rx.got.find((g) => g.body.type === 'UPDATE')!.body.record.tag).toBe('b');
    expect(rx.got.find((g) => g.body.truncated)!.body).toMatchObject({ type: 'INSERT', record: null, truncated: true });
    expect(rx.got.filter((g) => g.body.truncated)).toHaveLength(1);
    await call(t, 'DELETE', `/api/database/webhooks/${h.id}`, { headers: admin() });
    rx.got.length = 0;
    for (const [body, status, error] of [
      [{ name: 'x', table: 'nope', events: ['INSERT'], url: rx.url }, 404, 'TABLE_NOT_FOUND'],
      [{ name: 'x', table: 'notes', events: ['TRUNCATE'], url: rx.url }, 400, 'INVALID_INPUT'],
      [{ name: 'x', table: 'notes', events: [], url: rx.url }, 400, 'INVALID_INPUT'],
      [{ name: 'x', table: 'notes', events: ['INSERT'] }, 400, 'INVALID_INPUT'],
      [{ name: 'x', table: 'notes', events: ['INSERT'], url: 'http://192.168.1.10/hook' }, 400, 'OUTBOUND_NOT_ALLOWED'],
      [{ name: 'x', table: 'notes', events: ['INSERT'], url: 'http://localhost:9/hook' }, 400, 'OUTBOUND_NOT_ALLOWED'],
      [{ name: 'x', table: 'notes', events: ['INSERT'], functionSlug: 'nope' }, 404, 'FUNCTION_NOT_FOUND'],
      [{ name: 'x', table: 'notes; drop table x', events: ['INSERT'], url: rx.url }, 400, 'INVALID_INPUT'],
    ] as const) {
      const r = await hook(body);
      expect([r.status, r.body.error]).toEqual([status, error]);
      expect(r.body.nextActions).toEqual(expect.any(String));
    }
  });

  it('retries while the receiver is down, then delivers every change; marks failed after the last attempt; redelivers', async () => {
    const h = (await hook({ name: 'retry', table: 'notes', events: ['INSERT'], url: rx.url })).body;
    rx.state.status = 503;
    for (let i = 0; i < 20; i++) await sql(`insert into public.notes (body) values ('r${i}')`);
    await until(
      async () => (await deliveries(h.id)).filter((d) => d.attempts >= 2).length === 20,
      15_000,
      'second attempts',
    );
    rx.state.status = 200;
    await until(async () => new Set(rx.got.map((g) => g.body.record.body)).size === 20, 20_000, 'all 20 delivered');
    // The receiver answers before the worker records the answer: wait for the last record.
    await until(
      async () => (await deliveries(h.id)).every((d) => d.status === 'succeeded'),
      10_000,
      'every delivery marked succeeded',
    );
    // A receiver that stays down: failed after WEBHOOK_MAX_ATTEMPTS (4), with the last answer kept.
    rx.state.status = 500;
    await sql(`insert into public.notes (body) values ('doomed')`);
    await until(async () => (await deliveries(h.id)).some((d) => d.status === 'failed'), 30_000, 'a failed delivery');
    const failed = (await deliveries(h.id)).find((d) => d.status === 'failed')!;
    expect(failed).toMatchObject({ attempts: 4, responseStatus: 500, error: expect.stringMatching(/500/) });
    rx.state.status = 200;
    const again = await call(t, 'POST', `/api/database/webhooks/${h.id}/deliveries/${failed.id}/redeliver`, {
      headers: admin(),
    });
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ redeliveryOf: failed.id, status: 'pending' });
    await until(async () => rx.got.some((g) => g.body.record.body === 'doomed'), 10_000, 'the redelivery');
    // A disabled hook: no redelivery.
    await call(t, 'PATCH', `/api/database/webhooks/${h.id}`, { headers: admin(), body: { enabled: false } });
    const refused = await call(t, 'POST', `/api/database/webhooks/${h.id}/deliveries/${failed.id}/redeliver`, {
      headers: admin(),
    });
    expect([refused.status, refused.body.error]).toEqual([409, 'WEBHOOK_DISABLED']);
    await call(t, 'DELETE', `/api/database/webhooks/${h.id}`, { headers: admin() });
    rx.got.length = 0;
  }, 90_000);

  it('delivers to a function by slug, called as the admin with the signed payload', async () => {
    const code =
      'export default async (req) => new Response(req.headers.get("x-plinth-role") + " " + req.headers.get("webhook-id") + " " + JSON.parse(await req.text()).record.body)';
    expect(
      (await call(t, 'POST', '/api/functions', { headers: admin(), body: { name: 'On note', slug: 'on-note', code } }))
        .status,
    ).toBe(201);
    const h = (await hook({ name: 'fn', table: 'notes', events: ['INSERT'], functionSlug: 'on-note' })).body;
    await sql(`insert into public.notes (body) values ('to a function')`);
    await until(async () => (await deliveries(h.id))[0]?.status === 'succeeded', 30_000, 'the function delivery');
    const d = (await deliveries(h.id))[0];
    expect(d.responseBody).toBe(`admin ${d.id} to a function`);
  });

  it('bounds an attempt to a receiver that never answers (WEBHOOK_TIMEOUT_MS), and keeps the API answering', async () => {
    const h = (await hook({ name: 'hang', table: 'notes', events: ['INSERT'], url: rx.url })).body;
    rx.state.hang = true;
    await sql(`insert into public.notes (body) values ('hang')`);
    await until(async () => (await deliveries(h.id))[0]?.attempts >= 2, 15_000, 'two timed-out attempts');
    const started = Date.now();
    expect((await call(t, 'GET', '/api/health')).status).toBe(200);
    expect(Date.now() - started).toBeLessThan(500);
    expect((await deliveries(h.id))[0]).toMatchObject({
      status: 'pending',
      responseStatus: null,
      error: expect.stringMatching(/timeout|abort|time/i),
    });
  });

  it('loses no change committed while Plinth is stopped: the next instance delivers it from the outbox', async () => {
    const h = (await hook({ name: 'outbox', table: 'notes', events: ['INSERT'], url: rx.url })).body;
    const { rows } = await t.deps.db.query<{ name: string }>('select current_database() as name');
    // Stop this instance's webhook relay and jobs, as if it died; then commit changes straight to the database.
    await t.deps.webhooks.stop();
    await t.deps.jobs!.stop({ graceful: false });
    for (let i = 0; i < 30; i++) await t.deps.db.query(`insert into public.notes (body) values ($1)`, [`k${i}`]);
    expect((await t.deps.db.query<{ n: number }>('select count(*)::int as n from webhooks.outbox')).rows[0]!.n).toBe(
      30,
    );
    const url = new URL(
      backend === 'embedded' ? process.env.PLINTH_TEST_EMBEDDED_URL! : process.env.TEST_DATABASE_URL!,
    );
    url.pathname = `/${rows[0]!.name}`;
    const db = await openPostgres(url.toString(), { max: 3 });
    const next = await buildDeps(
      loadConfig({
        DATA_DIR: t.dataDir,
        LOG_LEVEL: 'silent',
        ADMIN_API_KEY: t.adminKey,
        PORT: '0',
        OUTBOUND_ALLOW_HOSTS: `127.0.0.1:${rx.port}`,
      }),
      { db },
    );
    try {
      await until(
        async () => new Set(rx.got.map((g) => g.body.record.body)).size === 30,
        15_000,
        'all 30 delivered by the next instance',
      );
      expect((await deliveries(h.id)).length).toBe(30);
    } finally {
      await next.close();
    }
  });
});
