// The MCP tools over the operations areas (metadata, logs, migrations, advisor, schedules,
// webhooks, email) on each backend: what they answer, their refusals as results, read-only mode.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';
import { mcpClient, type McpClient } from './helpers.js';

const WRITES = [
  'apply-migration',
  'run-advisor-scan',
  'create-schedule',
  'update-schedule',
  'delete-schedule',
  'run-schedule',
  'create-webhook',
  'update-webhook',
  'delete-webhook',
  'redeliver-webhook',
  'send-email',
];
const READS = [
  'get-backend-metadata',
  'get-table-schema',
  'list-log-sources',
  'get-container-logs',
  'search-logs',
  'list-migrations',
  'dry-run-migration',
  'get-advisor-issues',
  'list-schedules',
  'list-schedule-runs',
  'list-webhooks',
  'list-webhook-deliveries',
];

describe.each(backends())('MCP operations tools (%s)', (backend) => {
  let t: TestApp;
  let agent: McpClient;
  const ok = async (name: string, args: Record<string, unknown> = {}) => {
    const r = await agent.text(name, args);
    expect(r.isError, `${name}: ${r.text}`).toBe(false);
    return r.text;
  };
  const refused = async (name: string, args: Record<string, unknown>) => {
    const r = await agent.text(name, args);
    expect(r.isError, `${name} should fail: ${r.text}`).toBe(true);
    return r.text;
  };
  beforeAll(async () => {
    t = await startApp(backend);
    agent = await mcpClient(t);
  });
  afterAll(async () => {
    await agent?.close();
    await t?.close();
  });

  it('read-only sessions list the reading tools only', async () => {
    const ro = await mcpClient(t, { readOnly: true });
    const names = (await ro.listTools()).tools.map((x) => x.name);
    await ro.close();
    for (const n of READS) expect(names).toContain(n);
    for (const n of WRITES) expect(names).not.toContain(n);
    const all = (await agent.listTools()).tools.map((x) => x.name);
    for (const n of [...READS, ...WRITES]) expect(all).toContain(n);
  });

  it('migrations: dry run, apply, list; a version applied twice is refused', async () => {
    const sql =
      'create table items (id bigint generated always as identity primary key, label text not null);\ndrop table if exists nothing_here';
    const dry = await ok('dry-run-migration', { sql, version: '1' });
    expect(dry).toMatch(/^risk (WARNING|DANGER)/);
    expect(dry).toContain('version 1: pending');
    expect(dry).toContain('CreateStmt');
    expect(await ok('apply-migration', { version: '1', name: 'items', sql })).toContain(
      'Migration 1 (items) applied: 2 statement(s)',
    );
    expect(await ok('list-migrations')).toMatch(/\| 1 \| items \|/);
    expect(await ok('dry-run-migration', { sql, version: '1' })).toContain('version 1: applied');
    expect(await refused('apply-migration', { version: '1', name: 'items', sql })).toMatch(/\(409\)/);
    expect(await refused('apply-migration', { version: 'v1', name: 'x', sql })).toContain('INVALID_ARGUMENTS');
  });

  it('metadata: the backend and one table; an unknown table is a 404 result', async () => {
    const all = JSON.parse(await ok('get-backend-metadata')) as { version: string };
    expect(all.version).toEqual(expect.any(String));
    expect(JSON.stringify(all)).toContain('items');
    const s = await ok('get-table-schema', { tableName: 'items' });
    expect(s).toContain('table items (RLS off');
    expect(s).toContain('primary key (id)');
    expect(s).toMatch(/\| label \| text \| false \|/);
    expect(await refused('get-table-schema', { tableName: 'nope' })).toContain('TABLE_NOT_FOUND (404)');
  });

  it('advisor: a scan finds the table without RLS; fixed, a re-scan no longer does', async () => {
    await ok('run-raw-sql', { query: 'grant select on items to anon' });
    const scan = await ok('run-advisor-scan');
    expect(scan).toMatch(/security\/\S+ on table public\.items/);
    expect(await ok('get-advisor-issues', { category: 'security' })).toContain('table public.items');
    await ok('run-raw-sql', { query: 'alter table items enable row level security' });
    await ok('run-raw-sql', { query: 'create policy items_read on items for select to authenticated using (true)' });
    const again = await ok('run-advisor-scan');
    expect(again).not.toMatch(/security\/\S+ on table public\.items/);
  });

  it('schedules: create, run now, see the run, update, delete; bad cron is a 400 result', async () => {
    const created = JSON.parse(
      await ok('create-schedule', {
        name: 'count',
        cronSchedule: '0 3 * * *',
        sql: "insert into items (label) values ('tick')",
      }),
    ) as { id: string; target: string };
    expect(created.target).toContain('sql insert');
    expect(await ok('list-schedules')).toContain('count');
    await ok('run-schedule', { id: created.id });
    await until(
      async () => (await ok('list-schedule-runs', { id: created.id })).includes('succeeded'),
      10_000,
      'the manual run',
    );
    expect(await ok('list-schedule-runs', { id: created.id })).toMatch(/\| succeeded \| manual \|/);
    expect(await ok('update-schedule', { id: created.id, enabled: false })).toContain('"enabled":false');
    expect(await refused('create-schedule', { name: 'bad', cronSchedule: 'every day', sql: 'select 1' })).toMatch(
      /\(400\)/,
    );
    expect(await ok('delete-schedule', { id: created.id })).toContain('deleted');
    expect(await refused('run-schedule', { id: created.id })).toMatch(/\(404\)/);
    expect(await refused('run-schedule', { id: 'not-a-uuid' })).toContain('INVALID_ARGUMENTS: /id');
  });

  it('logs: sources, a source, a search; an unknown source is a result with the fix', async () => {
    await t.fetch('/api/health');
    await until(
      async () => (await ok('get-container-logs', { source: 'api', limit: 5 })).includes('GET'),
      10_000,
      'an api log line',
    );
    expect(await ok('list-log-sources')).toContain('| api |');
    expect(await ok('get-container-logs', { source: 'insforge.logs', limit: 2 })).toMatch(
      /2 of \d+ line\(s\); older lines: cursor=/,
    );
    expect(await ok('search-logs', { q: 'no line says this', limit: 5 })).toContain('(no rows)');
    expect(await refused('get-container-logs', { source: 'No Such Source!' })).toMatch(/\(4\d\d\)/);
  });

  it('webhooks: create to a function, list, deliveries, delete', async () => {
    await ok('create-function', {
      name: 'Sink',
      slug: 'sink',
      code: 'export default async function () { return new Response("ok"); }',
    });
    const created = await ok('create-webhook', {
      name: 'on-items',
      table: 'items',
      events: ['INSERT'],
      functionSlug: 'sink',
    });
    expect(created).toMatch(/signing secret \(shown this once\): whsec_/);
    const id = /"id":"([0-9a-f-]{36})"/.exec(created)![1]!;
    expect(await ok('list-webhooks')).toContain('on-items');
    expect(await ok('list-webhook-deliveries', { id })).toContain('(no rows)');
    await ok('run-raw-sql', { query: "insert into items (label) values ('hooked')" });
    await until(
      async () => /\| INSERT \| succeeded \|/.test(await ok('list-webhook-deliveries', { id })),
      15_000,
      'the delivery',
    );
    const deliveryId = /\| ([0-9a-f-]{36}) \| INSERT \| succeeded \|/.exec(
      await ok('list-webhook-deliveries', { id }),
    )![1]!;
    expect(JSON.parse(await ok('redeliver-webhook', { id, deliveryId }))).toMatchObject({
      redeliveryOf: deliveryId,
      event: 'INSERT',
    });
    expect(await refused('redeliver-webhook', { id, deliveryId: id })).toMatch(/\(404\)/);
    expect(await ok('update-webhook', { id, enabled: false })).toContain('"enabled":false');
    expect(
      await refused('create-webhook', {
        name: 'x',
        table: 'no_table',
        events: ['INSERT'],
        url: 'https://example.com/h',
      }),
    ).toMatch(/\(4\d\d\)/);
    expect(await ok('delete-webhook', { id })).toContain('deleted');
  });

  it('send-email: accepted as the admin; no body is a 400 result', async () => {
    expect(await ok('send-email', { to: 'someone@example.com', subject: 'Hi', text: 'hello' })).toContain(
      'accepted for someone@example.com',
    );
    expect(await refused('send-email', { to: 'someone@example.com', subject: 'Hi' })).toContain('INVALID_INPUT (400)');
  });
});
