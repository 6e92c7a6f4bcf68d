// HTTP fuzz: thousands of random and hostile query strings, table names and bodies against a
// real server. No 500, no database text in any answer, and nothing changed that should not be.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { call } from '../helpers/http.js';
import { admin, anon, sql } from './helpers.js';
import { HOSTILE, body, queryString, rng } from './hostile.js';

const COLUMNS = ['id', 'owner', 'name', 'n', 'score', 'ok', 'at', 'day', 'meta', 'created_at'];
const LEAK =
  /syntax error|SQLSTATE|at character|node_modules|public\."|invalid input syntax|violates|could not|\bERROR:/i;
// PostgREST's own "Could not find the table 'public.<name as asked>' in the schema cache" (and
// the function and relationship forms) is our answer, echoing the request, not database text.
const SCHEMA_CACHE = /Could not find (the|a) [\s\S]*? in the schema cache/g;
const REQUESTS = 1500;

describe.each(backends())('records fuzz (%s)', (backend) => {
  let t: TestApp;
  let identities: Array<Record<string, string>>;

  beforeAll(async () => {
    t = await startApp(backend);
    const mk = (tableName: string, rlsEnabled: boolean, columns: unknown[]) =>
      call(t, 'POST', '/api/database/tables', { headers: admin(t), body: { tableName, rlsEnabled, columns } });
    expect((await mk('canary', false, [{ name: 'v', type: 'integer', nullable: false }])).status).toBe(201);
    expect(
      (
        await mk('fz', true, [
          { name: 'owner', type: 'uuid', nullable: true, defaultValue: 'auth.uid()' },
          { name: 'name', type: 'string', nullable: true },
          { name: 'n', type: 'integer', nullable: true },
          { name: 'score', type: 'float', nullable: true },
          { name: 'ok', type: 'boolean', nullable: true },
          { name: 'at', type: 'datetime', nullable: true },
          { name: 'day', type: 'date', nullable: true },
          { name: 'meta', type: 'json', nullable: true },
        ])
      ).status,
    ).toBe(201);
    await sql(
      t,
      `create policy own on public.fz for all to authenticated using (owner = auth.uid()) with check (owner = auth.uid())`,
    );
    await sql(t, `create policy anon_read on public.fz for select to anon using (true)`);
    await sql(t, `create function public.echo(x text) returns text language sql immutable as $$ select x $$`);
    await call(t, 'POST', '/api/db/canary', { headers: admin(t), body: [{ v: 1 }, { v: 2 }, { v: 3 }] });
    const user = await createTestUser(t);
    await call(t, 'POST', '/api/db/fz', {
      headers: user.auth,
      body: [
        { name: 'a', n: 1 },
        { name: 'b', n: 2 },
      ],
    });
    identities = [admin(t), user.auth, anon(t)];
  });
  afterAll(async () => {
    await t?.close();
  });

  it(`answers ${REQUESTS} hostile requests without a 500 or a leak`, async () => {
    const tablesBefore = (await call(t, 'GET', '/api/database/tables', { headers: admin(t) })).body;
    const r = rng(backend === 'embedded' ? 1 : 2);
    const failures: string[] = [];
    let ok = 0;
    const one = async (i: number) => {
      const headers = { ...identities[i % identities.length]! };
      const hostileTable = r.next() < 0.1;
      const table = hostileTable ? encodeURIComponent(r.pick(HOSTILE).replace(/[\ud800-\udfff]/g, '')) || 'x' : 'fz';
      const qs = queryString(r, COLUMNS);
      const kind = r.int(10);
      let method = 'GET';
      let path = `/api/${r.next() < 0.5 ? 'db' : 'database/records'}/${table}?${qs}`;
      let payload: unknown;
      if (kind === 7) {
        method = r.pick(['POST', 'PATCH']);
        payload = body(r, COLUMNS);
        if (r.next() < 0.5)
          headers.prefer = r.pick(['return=representation', 'resolution=merge-duplicates', 'return=minimal', '💥']);
      } else if (kind === 8) {
        method = 'DELETE';
        if (r.next() < 0.5) headers.prefer = 'return=representation';
      } else if (kind === 9) {
        method = 'POST';
        path = `/api/db/rpc/${r.next() < 0.5 ? 'echo' : table}`;
        payload = r.next() < 0.5 ? { x: r.pick(HOSTILE) } : body(r, ['x', ...COLUMNS]);
      }
      if (r.next() < 0.05) headers.range = r.pick(['0-9', '5-', '9-1', 'bytes=0-1', r.pick(HOSTILE)]);
      let res;
      try {
        res = await call(t, method, path, { headers, body: payload });
      } catch (e) {
        // fetch refuses some header values (e.g. control characters) before sending: not our answer.
        if (e instanceof TypeError) return;
        throw e;
      }
      const where = `${method} ${path} ${JSON.stringify(payload)?.slice(0, 200)} -> ${res.status} ${res.text.slice(0, 300)}`;
      if (res.status < 300) ok++;
      if (res.status >= 500) failures.push(where);
      else if (res.status >= 400) {
        const b = res.body;
        if (!b || b.statusCode !== res.status || typeof b.error !== 'string' || typeof b.nextActions !== 'string')
          failures.push(`no envelope: ${where}`);
        else if (LEAK.test(b.message.replace(SCHEMA_CACHE, ''))) failures.push(`leak: ${where}`);
      }
    };
    for (let i = 0; i < REQUESTS; i += 4) await Promise.all([one(i), one(i + 1), one(i + 2), one(i + 3)]);
    expect(failures.slice(0, 10)).toEqual([]);
    // Enough requests must get through to the database, or the test proves little.
    expect(ok).toBeGreaterThan(REQUESTS / 10);

    const canary = await call(t, 'GET', '/api/db/canary?order=v', { headers: admin(t) });
    expect(canary.body.map((x: { v: number }) => x.v)).toEqual([1, 2, 3]);
    expect((await call(t, 'GET', '/api/database/tables', { headers: admin(t) })).body).toEqual(tablesBefore);
    const cols = (await call(t, 'GET', '/api/database/tables/fz/schema', { headers: admin(t) })).body.columns.map(
      (c: { name: string }) => c.name,
    );
    expect(cols).toEqual(['id', 'owner', 'name', 'n', 'score', 'ok', 'at', 'day', 'meta', 'created_at', 'updated_at']);
    // Still serving normally afterwards.
    expect((await call(t, 'GET', '/api/db/fz?select=n&order=n', { headers: admin(t) })).status).toBe(200);
  });
});
