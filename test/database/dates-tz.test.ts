// Dates and times from SQL an admin or agent writes come back as Postgres's own text on every
// path (admin SQL, /advance/rawsql, SQL as a user, MCP run-raw-sql), as the records API answers
// them, whatever the server process's time zone (issue #40 item 4). The process runs under
// Europe/Berlin for this file: a `date` read into a JavaScript Date there became the day before.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { call } from '../helpers/http.js';
import { admin, sql } from './helpers.js';
import { mcpClient } from '../mcp/helpers.js';

const previousTz = vi.hoisted(() => {
  const before = process.env.TZ;
  process.env.TZ = 'Europe/Berlin';
  return before;
});

const COLUMNS = 'd date, ts timestamp, tz timestamptz, t time, ttz timetz, ds date[]';
const VALUES = `'2026-11-01', '2026-11-01 12:34:56.789', '2026-11-01 00:00:00+00', '12:34:56', '12:34:56+02', '{2026-11-01,2026-12-24}'`;
/** Each column beside Postgres's own text of it: the answer must equal the text. */
const SELECT =
  'select d, d::text as d_text, ts, ts::text as ts_text, tz, tz::text as tz_text, t, t::text as t_text, ttz, ttz::text as ttz_text, ds from public.days';

// Test files share their fork (isolate: false): the next file gets the zone it had.
afterAll(() => {
  if (previousTz === undefined) delete process.env.TZ;
  else process.env.TZ = previousTz;
});

describe.each(backends())('date and time values keep their text under TZ=Europe/Berlin (%s)', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp(backend);
    await sql(t, `create table public.days (id int primary key, ${COLUMNS})`);
    await sql(t, `insert into public.days values (1, ${VALUES})`);
    await sql(t, 'grant select on public.days to anon');
  });
  afterAll(async () => {
    await t?.close();
  });

  const same = (row: Record<string, unknown>) => {
    expect(row.d).toBe('2026-11-01');
    for (const c of ['d', 'ts', 'tz', 't', 'ttz']) expect(row[c], c).toBe(row[`${c}_text`]);
    expect(row.ds).toEqual(['2026-11-01', '2026-12-24']);
  };

  it('runs under Europe/Berlin (the check is real)', () => {
    expect(new Date(2026, 10, 1).getTimezoneOffset()).toBe(-60);
  });

  it('the records API answers the date as 2026-11-01', async () => {
    const r = await call(t, 'GET', '/api/database/records/days?select=d', { headers: admin(t) });
    expect(r.body).toEqual([{ d: '2026-11-01' }]);
  });

  it('admin SQL and /advance/rawsql answer the same text as Postgres', async () => {
    same((await sql(t, SELECT)).rows[0]);
    same((await sql(t, `${SELECT} where d = $1`, ['2026-11-01'])).rows[0]);
    const raw = await call(t, 'POST', '/api/database/advance/rawsql', { headers: admin(t), body: { query: SELECT } });
    expect(raw.status, raw.text).toBe(200);
    same(raw.body.rows[0]);
  });

  it('SQL run as anon answers the same text', async () => {
    const r = await call(t, 'POST', '/api/database/sql/as', {
      headers: admin(t),
      body: { query: SELECT, userId: null },
    });
    expect(r.status, r.text).toBe(200);
    same(r.body.rows[0]);
  });

  it('MCP run-raw-sql shows the date as Postgres writes it', async () => {
    const mcp = await mcpClient(t);
    try {
      const r = await mcp.text('run-raw-sql', { query: 'select d, tz::text as tz_text, tz from public.days' });
      expect(r.isError, r.text).toBe(false);
      expect(r.text).toContain('| 2026-11-01 |');
      expect(r.text).not.toContain('2026-10-31');
      expect(r.text).not.toContain('T00:00:00');
      const cells = r.text
        .split('\n')
        .find((l) => l.startsWith('| 2026'))!
        .split('|')
        .map((c) => c.trim());
      expect(cells[3]).toBe(cells[2]);
    } finally {
      await mcp.close();
    }
  });
});
