// Usage over time (GET /api/metrics/history): a sample at start and one per interval from the
// job, true values (a table's rows, an object's bytes, function calls and errors, AI tokens),
// ranges, the 30-day retention, admin only, and one sample per interval across two instances.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminUrl, backends, type Backend } from '../helpers/db.js';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { MOCK_USAGE, OpenAiMock } from '../helpers/openai-mock.js';
import { HOUSEKEEPING } from '../../src/automation.js';
import { loadConfig } from '../../src/config/index.js';
import { buildDeps } from '../../src/deps.js';
import { openPostgres } from '../../src/db/postgres.js';

const KEY = 'sk-test-plinth-upstream-key-0123456789';
const FLAKY = `
export default async function (req: Request): Promise<Response> {
  if (new URL(req.url).searchParams.get('fail')) throw new Error('failed on purpose');
  return new Response('ok');
}`;

interface Sample {
  at: string;
  databaseBytes: number;
  storageBytes: number;
  functionCalls: number | null;
  functionErrors: number | null;
  aiTokens: number;
}

describe.each(backends())('usage history (%s)', (backend: Backend) => {
  let mock: OpenAiMock;
  let t: TestApp;
  let admin: Record<string, string>;

  beforeAll(async () => {
    mock = await new OpenAiMock(KEY).start();
    t = await startApp(backend, { USAGE_SAMPLE_SECONDS: '1', AI_BASE_URL: mock.baseUrl, AI_API_KEY: KEY });
    admin = { 'x-api-key': t.adminKey };
  });
  afterAll(async () => {
    await t?.close();
    await mock?.stop();
  });

  const history = async (
    range = '1h',
  ): Promise<{ samples: Sample[]; intervalSeconds: number; stepSeconds: number }> => {
    const r = await call(t, 'GET', `/api/metrics/history?range=${range}`, { headers: admin });
    expect(r.status, r.text).toBe(200);
    return r.body;
  };
  const sql = async (query: string) =>
    expect((await call(t, 'POST', '/api/database/sql', { headers: admin, body: { query } })).status).toBe(200);
  /** Samples (taken by the job, as in production) until one stands for a time after `after`. */
  const sampledPast = async (after: number) => {
    await expect
      .poll(
        async () => {
          await t.deps.jobs!.send(HOUSEKEEPING.usage, {});
          return Date.parse((await history()).samples.at(-1)!.at);
        },
        { interval: 500 },
      )
      .toBeGreaterThan(after);
    return (await history()).samples;
  };

  it('shows a sample at once on a fresh server, then one per interval from the job', async () => {
    const first = await history();
    expect(first.intervalSeconds).toBe(1);
    expect(first.samples.length).toBeGreaterThanOrEqual(1);
    expect(first.samples[0]).toMatchObject({ functionCalls: 0, functionErrors: 0, aiTokens: 0, storageBytes: 0 });
    expect(first.samples[0]!.databaseBytes).toBeGreaterThan(1_000_000);
    const samples = await sampledPast(Date.parse(first.samples[0]!.at));
    // An hour answers 5-second points (720 at most): count the 1-second samples in the table.
    expect(
      (await t.deps.db.query<{ n: number }>('select count(*)::int as n from system.usage_samples')).rows[0]!.n,
    ).toBeGreaterThan(1);
    const ats = samples.map((s) => Date.parse(s.at));
    expect(ats).toEqual([...ats].sort((a, b) => a - b));
    expect(ats.every((at) => at % 1000 === 0)).toBe(true);
  });

  it('tells the truth: database bytes grow with rows, storage bytes are the objects, calls and tokens are counted', async () => {
    const before = (await history()).samples.at(-1)!;
    await sql(`create table public.bulk as select g as n, repeat('x', 200) as pad from generate_series(1, 20000) g`);
    expect(
      (
        await call(t, 'POST', '/api/storage/buckets', {
          headers: admin,
          body: { bucketName: 'history', isPublic: false },
        })
      ).status,
    ).toBeLessThan(300);
    const put = await t.fetch('/api/storage/buckets/history/objects/a.bin', {
      method: 'PUT',
      headers: { ...admin, 'content-type': 'application/octet-stream' },
      body: 'y'.repeat(12_345),
    });
    expect(put.status).toBeLessThan(300);
    expect(
      (await call(t, 'POST', '/api/functions', { headers: admin, body: { name: 'Flaky', slug: 'flaky', code: FLAKY } }))
        .status,
    ).toBe(201);
    for (const q of ['', '', '?fail=1']) await (await t.fetch(`/functions/flaky${q}`)).text();
    const chat = await call(t, 'POST', '/api/ai/chat/completions', {
      headers: admin,
      body: { model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }] },
    });
    expect(chat.status).toBe(200);
    const samples = await sampledPast(Date.now());
    const last = samples.at(-1)!;
    expect(last.databaseBytes - before.databaseBytes).toBeGreaterThan(3_000_000);
    expect(last.storageBytes).toBe(12_345);
    const total = (k: 'functionCalls' | 'functionErrors' | 'aiTokens') => samples.reduce((n, s) => n + (s[k] ?? 0), 0);
    expect(total('functionCalls')).toBe(3);
    expect(total('functionErrors')).toBe(1);
    expect(total('aiTokens')).toBe(MOCK_USAGE.total_tokens);
  });

  it('counts a call whose line reached the store after its interval was sampled (another instance, a slow batch)', async () => {
    await sampledPast(Date.now());
    type Row = { at: Date; calls: number; errors: number; tokens: number };
    const row = async (at?: Date) =>
      (
        await t.deps.db.query<Row>(
          `select at, function_calls as calls, function_errors as errors, ai_tokens::int as tokens from system.usage_samples
            where $1::timestamptz is null or at = $1 order by at desc limit 1`,
          [at ?? null],
        )
      ).rows[0]!;
    const target = await row();
    const before = { calls: target.calls, errors: target.errors, tokens: target.tokens };
    // Lines of calls made within that interval, written only now, as a late batch is.
    const at = new Date(target.at.getTime() - 200);
    await t.deps.db.query(
      `insert into system.logs (time, source, level, message, fields) values
         ($1, 'functions', 'info', 'invoked', '{"cold": false}'), ($1, 'functions', 'error', 'invoked', '{"cold": true}')`,
      [at],
    );
    await t.deps.db.query(
      `insert into ai.usage (caller, endpoint, model, stream, prompt_tokens, completion_tokens, total_tokens, images, estimated, latency_ms, status, created_at)
       values ('admin', 'chat', 'late', false, 1, 2, 3, 0, false, 1, 200, $1)`,
      [at],
    );
    await expect
      .poll(
        async () => {
          await t.deps.jobs!.send(HOUSEKEEPING.usage, {});
          const { calls, errors, tokens } = await row(target.at);
          return { calls, errors, tokens };
        },
        { interval: 300 },
      )
      .toEqual({ calls: before.calls + 2, errors: before.errors + 1, tokens: before.tokens + 3 });
  });

  it('answers the range asked for, oldest first, neighbouring samples added up past 720 points', async () => {
    await t.deps.db.query(
      `insert into system.usage_samples (at, database_bytes, storage_bytes, function_calls, function_errors, ai_tokens)
       select date_trunc('hour', now()) - a, b, 7, 1, 0, 5 from (values (interval '2 hours', 111), (interval '2 days', 222), (interval '10 days', 333)) v (a, b)`,
    );
    const old = async (range: string) => {
      const h = await history(range);
      expect(h.samples.map((s) => s.at)).toEqual(h.samples.map((s) => s.at).sort());
      return {
        step: h.stepSeconds,
        bytes: h.samples.filter((s) => Date.parse(s.at) < Date.now() - 5400_000).map((s) => s.databaseBytes),
      };
    };
    expect(await old('1h')).toEqual({ step: 5, bytes: [] });
    expect(await old('24h')).toEqual({ step: 120, bytes: [111] });
    expect(await old('7d')).toEqual({ step: 840, bytes: [222, 111] });
    expect(await old('30d')).toEqual({ step: 3600, bytes: [333, 222, 111] });
    const day = (await history('30d')).samples.find((s) => s.databaseBytes === 222)!;
    expect(day).toMatchObject({ storageBytes: 7, functionCalls: 1, functionErrors: 0, aiTokens: 5 });
  });

  it('drops samples older than 30 days in the sampling job', async () => {
    await t.deps.db.query(
      `insert into system.usage_samples (at, database_bytes, storage_bytes, ai_tokens) values (now() - interval '31 days', 1, 1, 0), (now() - interval '29 days', 2, 2, 0)`,
    );
    const count = async () =>
      (
        await t.deps.db.query<{ n: number }>(
          `select count(*)::int as n from system.usage_samples where at < now() - interval '28 days'`,
        )
      ).rows[0]!.n;
    expect(await count()).toBe(2);
    await t.deps.jobs!.send(HOUSEKEEPING.usage, {});
    await expect.poll(count).toBe(1);
  });

  it('is for admins only; an unknown range is a 400 envelope', async () => {
    const user = await createTestUser(t);
    expect((await call(t, 'GET', '/api/metrics/history')).body).toMatchObject({
      statusCode: 401,
      error: 'UNAUTHORIZED',
    });
    expect((await call(t, 'GET', '/api/metrics/history', { headers: { apikey: t.anonKey } })).body).toMatchObject({
      statusCode: 403,
      error: 'FORBIDDEN',
    });
    expect((await call(t, 'GET', '/api/metrics/history', { token: user.token })).body).toMatchObject({
      statusCode: 403,
      error: 'FORBIDDEN',
    });
    for (const range of ['2d', '', '1h;drop', '24H']) {
      const r = await call(t, 'GET', `/api/metrics/history?range=${encodeURIComponent(range)}`, { headers: admin });
      expect(r.status, range).toBe(400);
      expect(r.body).toMatchObject({ statusCode: 400, error: 'INVALID_INPUT' });
      expect(r.body.message).toBe('Invalid request: querystring/range must be one of 1h, 24h, 7d, 30d.');
      expect(typeof r.body.nextActions).toBe('string');
    }
  });

  it('takes one sample per interval with two instances on one database', async () => {
    const { rows } = await t.deps.db.query<{ name: string }>('select current_database() as name');
    const u = new URL(adminUrl(backend));
    u.pathname = `/${rows[0]!.name}`;
    const config = loadConfig({
      DATA_DIR: t.dataDir,
      LOG_LEVEL: 'silent',
      ADMIN_API_KEY: t.adminKey,
      USAGE_SAMPLE_SECONDS: '1',
    });
    const other = await buildDeps(config, { db: await openPostgres(u.toString(), { max: 3 }) });
    try {
      await t.deps.db.query('delete from system.usage_samples');
      const started = Date.now();
      for (let i = 0; i < 8; i++) {
        await Promise.all([t.deps.usageHistory.sample(), other.usageHistory.sample()]);
        await new Promise((r) => setTimeout(r, 400));
      }
      const seconds = Math.ceil((Date.now() - started) / 1000);
      const { rows: at } = await t.deps.db.query<{ s: number }>(
        `select extract(epoch from at)::float8 as s from system.usage_samples order by at`,
      );
      // Sixteen tries over a few seconds: one sample per second at most, each on a whole second.
      expect(at.length).toBeGreaterThanOrEqual(2);
      expect(at.length).toBeLessThanOrEqual(seconds + 1);
      expect(at.every((r, i) => Number.isInteger(r.s) && (i === 0 || r.s > at[i - 1]!.s))).toBe(true);
    } finally {
      await other.close();
    }
  });
});
