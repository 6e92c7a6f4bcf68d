// The embedded Postgres server's own log in the store (source postgres): errors and statements
// slower than LOG_SLOW_STATEMENT_MS, without bind values. Runs Plinth as `npm start` does, on its
// own embedded cluster (the server Postgres's log is its operator's).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlinth, type FaultApp } from '../faults/app.js';
import { until } from '../helpers/until.js';

describe('embedded Postgres log', () => {
  let t: FaultApp;
  const admin = () => ({ 'x-api-key': t.adminKey, 'content-type': 'application/json' });
  const sql = (query: string, params: unknown[] = []) =>
    t.fetch('/api/database/sql', { method: 'POST', headers: admin(), body: JSON.stringify({ query, params }) });
  const postgresLines = async () =>
    (await (await t.fetch('/api/logs/postgres.logs?limit=200', { headers: admin() })).json()).logs as any[];

  beforeAll(async () => {
    t = await startPlinth({ LOG_SLOW_STATEMENT_MS: '150' });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  it('stores slow statements (no bind values) and errors (no statement text)', async () => {
    expect((await sql('select pg_sleep(0.3), $1::text as v', ['bind-secret-value'])).status).toBe(200);
    expect((await sql('select 1 as quick')).status).toBe(200);
    expect((await sql("select * from no_such_table_for_logs where x = 'literal-secret'")).status).toBe(400);
    let lines: any[] = [];
    await until(
      async () => {
        lines = await postgresLines();
        return lines.some((l) => l.eventMessage.startsWith('slow statement')) && lines.some((l) => l.level === 'error');
      },
      10_000,
      'the postgres log lines',
    );
    const slow = lines.find((l) => l.eventMessage.startsWith('slow statement'));
    expect(slow.body.statement).toContain('pg_sleep');
    expect(slow.body.durationMs).toBeGreaterThanOrEqual(300);
    expect(lines.some((l) => String(l.body.statement ?? '').includes('quick'))).toBe(false);
    const error = lines.find((l) => l.level === 'error');
    expect(error.eventMessage).toContain('no_such_table_for_logs');
    expect(JSON.stringify(lines)).not.toMatch(/bind-secret-value|literal-secret/);
  });
});
