// Issue 40, item 3: a read-only MCP session (?readonly=1) is read-only in the database, not
// only in the tools it lists: every tool runs its statements in READ ONLY transactions, so a
// view that calls a volatile function which writes is refused by Postgres itself.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { mcpClient, type McpClient } from './helpers.js';

/** Arguments that satisfy a tool's required inputs (the values need not name anything that exists). */
function sampleArgs(schema: { properties?: Record<string, any>; required?: string[] }): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const name of schema.required ?? []) {
    const p = schema.properties?.[name] ?? {};
    const choices = p.enum ?? p.anyOf?.map((x: { const?: unknown }) => x.const).filter((x: unknown) => x !== undefined);
    if (choices?.length) args[name] = choices[0];
    else if (p.type === 'integer' || p.type === 'number') args[name] = 1;
    else if (p.type === 'boolean') args[name] = false;
    else if (p.type === 'array') args[name] = [];
    else if (p.format === 'uuid' || /id$/i.test(name)) args[name] = randomUUID();
    else args[name] = name === 'sql' || name === 'query' ? 'select 1' : 'ro_log';
  }
  return args;
}

describe.each(backends())('read-only MCP sessions (%s)', (backend) => {
  let t: TestApp;
  let ro: McpClient;
  const sql = async (query: string) => {
    const r = await call(t, 'POST', '/api/database/sql', { headers: { 'x-api-key': t.adminKey }, body: { query } });
    expect(r.status, r.text).toBe(200);
    return r.body.rows;
  };

  beforeAll(async () => {
    t = await startApp(backend);
    await sql(
      'create table public.ro_log (id uuid primary key default gen_random_uuid(), at timestamptz default now())',
    );
    await sql(
      `create function public.ro_touch() returns int language plpgsql volatile as $$ begin insert into public.ro_log default values; return 1; end $$`,
    );
    await sql('create view public.ro_view as select public.ro_touch() as n');
    ro = await mcpClient(t, { readOnly: true });
  });
  afterAll(async () => {
    await ro?.close();
    await t?.close();
  });

  it('select-records through a view whose function writes is refused, and nothing is written', async () => {
    const r = await ro.text('select-records', { table: 'ro_view' });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/^READ_ONLY \(403\)/);
    expect(await sql('select count(*)::int as n from public.ro_log')).toEqual([{ n: 0 }]);
    // Reads still work, and the same call on a session that may write does write.
    expect((await ro.text('select-records', { table: 'ro_log' })).isError).toBe(false);
    const rw = await mcpClient(t);
    try {
      expect((await rw.text('select-records', { table: 'ro_view' })).isError).toBe(false);
    } finally {
      await rw.close();
    }
    expect((await sql('select count(*)::int as n from public.ro_log'))[0].n).toBeGreaterThan(0);
  });

  it('every tool of a read-only session still answers (none fails inside the server)', async () => {
    const tools = (await ro.listTools()).tools;
    expect(tools.length).toBeGreaterThan(20);
    const failed: string[] = [];
    for (const tool of tools) {
      const r = await ro.text(tool.name, sampleArgs(tool.inputSchema as never));
      if (r.isError && /INTERNAL_ERROR|READ_ONLY/.test(r.text)) failed.push(`${tool.name}: ${r.text}`);
    }
    expect(failed).toEqual([]);
    // The calls were counted (written outside the read-only scope).
    await expect
      .poll(
        async () => (await t.deps.db.query<{ n: number }>('select count(*)::int as n from mcp.tool_calls')).rows[0]!.n,
      )
      .toBeGreaterThanOrEqual(tools.length);
  });
});
