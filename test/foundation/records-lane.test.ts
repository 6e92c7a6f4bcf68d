// The front lane's records reads (src/http/lanes/records.ts): `GET /api/db/<table>` answered
// ahead of Fastify when the caller is known and the query's shape is compiled already. The same
// requests go to a server with the lane and to one without it (Fastify answers everything), on
// databases set up alike: status, headers (rate-limit headers included: one budget whichever
// answers), body, Fastify's request lines on stdout, the stored `api` line and the route's
// metrics must be the same; a request the lane should take must not reach Fastify's hooks, and
// one it should leave must.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { jsonLines, storedApiLine } from '../helpers/log.js';
import { sql } from '../database/helpers.js';

const A = '00000000-0000-4000-8000-00000000000a';
const B = '00000000-0000-4000-8000-00000000000b';
const GONE = '00000000-0000-4000-8000-00000000000c';
const C = '00000000-0000-4000-8000-00000000000d';
const LIMIT = 60;

interface Side {
  t: TestApp;
  stdout: Array<Record<string, any>>;
  /** Request ids that reached Fastify's onRequest hooks. */
  fastify: Set<string>;
  tokens: Record<string, string>;
}

async function side(backend: 'embedded' | 'postgres', frontLane: boolean): Promise<Side> {
  const { stream, lines } = jsonLines();
  const fastify = new Set<string>();
  const env = { LOG_LEVEL: 'info', RATE_LIMIT_PLAN: 'enterprise', RATE_LIMIT_PER_MINUTE: String(LIMIT) };
  const t = await startApp(
    backend,
    env,
    (app) =>
      app.addHook('onRequest', (request, _reply, done) => {
        fastify.add(request.id);
        done();
      }),
    stream,
    { frontLane },
  );
  await sql(
    t,
    `create table public.notes (id integer primary key, owner uuid not null, n integer not null, label text not null, is_public boolean not null default false)`,
  );
  await sql(t, 'alter table public.notes enable row level security');
  await sql(t, 'grant select on public.notes to anon, authenticated');
  await sql(t, 'create policy own on public.notes for select to authenticated using (owner = auth.uid())');
  await sql(t, 'create policy open on public.notes for select to anon using (is_public)');
  const tokens: Record<string, string> = {};
  for (const [i, id] of [A, B, GONE, C].entries()) {
    await t.deps.db.query(
      `insert into auth.users (id, email, password_hash, email_verified, profile) values ($1, $2, 'x', true, '{}')`,
      [id, `lane-${i}@example.com`],
    );
    const sid = id.replace(/.$/, 'f').replace(/^0/, String(i + 1));
    await t.deps.db.query(
      `insert into auth.sessions (id, user_id, expires_at) values ($1, $2, now() + interval '1 day')`,
      [sid, id],
    );
    tokens[id] = await t.deps.tokens.sign({ sub: id, email: `lane-${i}@example.com`, role: 'authenticated', sid });
  }
  for (let i = 1; i <= 6; i++) {
    await t.deps.db.query(`insert into public.notes values ($1, $2, $3, $4, $5)`, [
      i,
      i % 2 ? A : B,
      i * 10,
      `note ${i}`,
      i > 4,
    ]);
  }
  // The first read loads the schema (a new version: the shape is not kept), as after any DDL.
  expect((await t.fetch('/api/db/notes?limit=1', { headers: { 'x-api-key': t.adminKey } })).status).toBe(200);
  return { t, stdout: lines, fastify, tokens };
}

/** One answer, made comparable: no Date, the rate-limit reset (a unix time) checked and set aside. */
async function answer(s: Side, path: string, headers: Record<string, string>) {
  const r = await s.t.fetch(path, { headers });
  const text = await r.text();
  const h = Object.fromEntries(r.headers);
  delete h.date;
  if (h['x-ratelimit-reset'] !== undefined) {
    expect(Math.abs(Number(h['x-ratelimit-reset']) - (Date.now() / 1000 + 60))).toBeLessThan(62);
    h['x-ratelimit-reset'] = '(reset)';
  }
  expect(h['x-request-id']).toBe(headers['x-request-id']);
  return { status: r.status, headers: h, body: text.replace(/"timestamp":"[^"]+"/, '"timestamp":"(time)"') };
}

/** The stdout lines of one request id, without time and duration. */
function stdoutLines(s: Side, requestId: string) {
  return s.stdout.filter((l) => l.reqId === requestId).map(({ time, responseTime, ...rest }) => rest);
}

/** The request metrics of the records route: counts by method and status, and the histogram's count. */
async function routeMetrics(s: Side): Promise<string[]> {
  const { body } = await s.t.deps.metrics.scrape();
  return body
    .split('\n')
    .filter((l) => /^plinth_http_request(s_total|_duration_seconds_count)\{.*route="\/api\/db\/:table"/.test(l))
    .sort();
}

type Who = 'a' | 'b' | 'c' | 'gone' | 'anon' | 'admin' | 'none';

function credential(s: Side, who: Who): Record<string, string> {
  if (who === 'anon') return { apikey: s.t.anonKey };
  if (who === 'admin') return { 'x-api-key': s.t.adminKey };
  if (who === 'none') return {};
  return { authorization: `Bearer ${s.tokens[{ a: A, b: B, c: C, gone: GONE }[who]]}` };
}

describe.each(backends())('records reads in the front lane (%s)', (backend) => {
  let lane: Side;
  let plain: Side;
  let n = 0;

  beforeAll(async () => {
    [lane, plain] = await Promise.all([side(backend, true), side(backend, false)]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([lane?.t.close(), plain?.t.close()]);
  });

  /**
   * Sends the request to both servers and compares everything; `lane`: whether the lane must
   * have answered it (else Fastify must have, on both).
   */
  async function same(who: Who, path: string, expected: { lane: boolean; status: number }, extra = {}) {
    const id = `rl-${backend}-${n++}`;
    const [a, b] = [
      await answer(lane, path, { ...credential(lane, who), ...extra, 'x-request-id': id }),
      await answer(plain, path, { ...credential(plain, who), ...extra, 'x-request-id': id }),
    ];
    const name = `${who} ${path} ${JSON.stringify(extra)}`;
    expect(a, name).toEqual(b);
    expect(a.status, `${name}: ${a.body}`).toBe(expected.status);
    expect(plain.fastify.has(id), `${name}: Fastify answered without the lane`).toBe(true);
    expect(lane.fastify.has(id), `${name}: reached Fastify with the lane`).toBe(!expected.lane);
    expect(await storedApiLine(lane.t, id), `${name}: stored line`).toEqual(await storedApiLine(plain.t, id));
    const out = stdoutLines(lane, id);
    expect(out.map((l) => l.msg).slice(0, 1), `${name}: request lines`).toEqual(['incoming request']);
    expect(out.at(-1)?.msg, `${name}: request lines`).toBe('request completed');
    expect(out, `${name}: request lines`).toEqual(stdoutLines(plain, id));
    return a;
  }

  it('answers cached shapes as Fastify does, for every kind of caller', async () => {
    const q = '/api/db/notes?n=gte.20&select=id,n,label&order=n.desc&limit=2&offset=1';
    // The first read of a shape (and of a token) is Fastify's: it compiles and verifies.
    await same('a', '/api/db/notes?n=gte.10&select=id,n,label&order=n.desc&limit=3&offset=0', {
      lane: false,
      status: 200,
    });
    // The keys are known without a verification.
    for (const who of ['a', 'anon', 'admin'] as const) {
      const r = await same(who, q, { lane: true, status: 200 });
      expect(JSON.parse(r.body).length).toBeGreaterThan(0);
      expect(r.headers['content-range']).toMatch(/^1-\d\/\*$/);
    }
    await same('a', '/api/db/notes', { lane: false, status: 200 });
    expect(JSON.parse((await same('a', '/api/db/notes', { lane: true, status: 200 })).body)).toHaveLength(3);
    await same('b', '/api/db/notes?label=like.*note*', { lane: false, status: 200 });
    await same('b', '/api/db/notes?label=like.*3*', { lane: true, status: 200 });
    await same('a', '/api/db/notes', { lane: true, status: 200 }, { origin: 'https://app.example' });
    await same('a', '/api/db/notes', { lane: true, status: 200 }, { accept: 'application/json' });
    await same('a', '/api/db/notes', { lane: true, status: 200 }, { 'accept-profile': 'public' });
  });

  it('leaves to Fastify what it does not answer', async () => {
    await same('none', '/api/db/notes', { lane: false, status: 401 });
    await same('a', '/api/db/notes?n=gte.x&select=id,n,label&order=n.desc&limit=2&offset=1', {
      lane: false,
      status: 400,
    });
    await same('a', '/api/db/missing', { lane: false, status: 404 });
    await same('a', '/api/db/missing', { lane: false, status: 404 });
    await same('a', '/api/db/notes', { lane: false, status: 200 }, { prefer: 'count=exact' });
    await same('a', '/api/db/notes', { lane: false, status: 200 }, { range: '0-1' });
    await same('a', '/api/db/notes', { lane: false, status: 200 }, { accept: 'text/csv' });
    await same('a', '/api/db/notes', { lane: false, status: 401 }, { apikey: 'anon_wrong' });
    await same('a', '/api/db/notes', { lane: false, status: 406 }, { 'accept-profile': 'private' });
  });

  it("answers a signed-out session's token 401, as Fastify", async () => {
    await same('gone', '/api/db/notes', { lane: false, status: 200 });
    await same('gone', '/api/db/notes', { lane: true, status: 200 });
    for (const s of [lane, plain])
      await s.t.deps.db.query('update auth.sessions set revoked_at = now() where user_id = $1', [GONE]);
    await same('gone', '/api/db/notes', { lane: true, status: 401 });
  });

  it('never serves a shape compiled before a schema change', async () => {
    await same('a', '/api/db/notes?select=n,label', { lane: false, status: 200 });
    await same('a', '/api/db/notes?select=n,label', { lane: true, status: 200 });
    // DDL on this instance: the schema's version changes, Fastify compiles again.
    for (const s of [lane, plain]) await sql(s.t, 'alter table public.notes alter column n type text using n::text');
    // The first read after it loads the schema and keeps the shape for that version; the next
    // is the lane's.
    await same('a', '/api/db/notes?select=n,label', { lane: false, status: 200 });
    await same('a', '/api/db/notes?select=n,label', { lane: true, status: 200 });
    // Another instance's DDL (this one is not told): the statement fails, answered as Fastify does.
    for (const s of [lane, plain]) await s.t.deps.db.query('alter table public.notes rename column label to title');
    await same('a', '/api/db/notes?select=n,label', { lane: true, status: 400 });
    await same('a', '/api/db/notes?select=n,label', { lane: false, status: 400 });
  });

  it('counts in the one budget and answers 429 as Fastify', async () => {
    // A caller of its own (a fresh window). Spent on answers of Fastify (a Prefer header), then on
    // the lane's: the remainder is shared.
    await same('c', '/api/db/notes?id=eq.2', { lane: false, status: 200 });
    for (let i = 0; i < LIMIT - 8; i++)
      await same('c', '/api/db/notes', { lane: false, status: 200 }, { prefer: 'count=exact' });
    let last = await same('c', '/api/db/notes?id=eq.4', { lane: true, status: 200 });
    while (last.headers['x-ratelimit-remaining'] !== '0')
      last = await same('c', '/api/db/notes?id=eq.6', { lane: true, status: 200 });
    const refused = await same('c', '/api/db/notes?id=eq.4', { lane: true, status: 429 });
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(JSON.parse(refused.body)).toMatchObject({ error: 'RATE_LIMITED', code: 'RATE_LIMITED' });
    await same('c', '/api/db/notes', { lane: false, status: 429 }, { prefer: 'count=exact' });
    // Over the limit with a signed-out session: the route checks the session first (401).
    for (const s of [lane, plain])
      await s.t.deps.db.query('update auth.sessions set revoked_at = now() where user_id = $1', [C]);
    await same('c', '/api/db/notes?id=eq.4', { lane: true, status: 401 });
    expect(await routeMetrics(lane)).toEqual(await routeMetrics(plain));
  });
});
