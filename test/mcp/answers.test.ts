// What the MCP server tells an agent is true and names what the agent can use (issue #40
// item 4): run-raw-sql says what it runs, errors name tools instead of HTTP routes, protocol
// errors are not doubled, buckets are private unless asked, the docs can be searched by
// section, and a write refused by row-level security names the policies it failed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { mcpClient, type McpClient } from './helpers.js';

describe.each(backends())('MCP answers an agent can act on (%s)', (backend) => {
  let t: TestApp;
  let mcp: McpClient;
  beforeAll(async () => {
    t = await startApp(backend);
    mcp = await mcpClient(t);
  });
  afterAll(async () => {
    await mcp?.close();
    await t?.close();
  });
  const description = async (name: string) =>
    (await mcp.listTools()).tools.find((x) => x.name === name)?.description ?? '';

  it('run-raw-sql says it runs a script of several statements without params, and it does', async () => {
    expect(await description('run-raw-sql')).toMatch(/script of several statements/);
    expect(await description('run-raw-sql')).not.toMatch(/^Run one SQL statement/);
    const r = await mcp.text('run-raw-sql', {
      query: 'create table a1 (id int); create table a2 (id int); select 7 as n',
    });
    expect(r.isError, r.text).toBe(false);
    expect((await mcp.text('list-tables')).text).toMatch(/a1\na2/);
  });

  it('an unknown tool is one InvalidParams error, its prefix not doubled', async () => {
    const err = await mcp.callTool({ name: 'no-such-tool', arguments: {} }).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/^MCP error -32602: Unknown tool "no-such-tool"/);
    expect(err?.message).not.toContain('MCP error -32602: MCP error');
  });

  it('errors name the tool the agent has, not the HTTP route', async () => {
    const doc = await mcp.text('fetch-docs', { docType: 'nope' });
    expect(doc.isError).toBe(true);
    expect(doc.text).toContain('the tool list-docs');
    expect(doc.text).not.toContain('GET /api/docs');
    const table = await mcp.text('get-table-schema', { tableName: 'no_such_table' });
    expect(table.isError).toBe(true);
    expect(table.text).not.toMatch(/(GET|POST) \/api\/database\/tables/);
  });

  it('create-bucket makes a private bucket unless isPublic is true, and says so', async () => {
    expect(await description('create-bucket')).toMatch(/PRIVATE unless isPublic/);
    expect((await mcp.text('create-bucket', { bucketName: 'uploads' })).text).toContain('(private)');
    expect((await mcp.text('create-bucket', { bucketName: 'assets', isPublic: true })).text).toContain('(public)');
    const { rows } = await t.deps.db.query('select name, is_public from storage.buckets order by name');
    expect(rows).toEqual([
      { name: 'assets', is_public: true },
      { name: 'uploads', is_public: false },
    ]);
  });

  it('search-docs answers the matching sections, not whole pages', async () => {
    const r = await mcp.text('search-docs', { query: 'create policy auth.uid', limit: 2 });
    expect(r.isError, r.text).toBe(false);
    expect(r.text).toMatch(/^## /);
    expect(r.text).toContain('(page: ');
    expect(r.text.toLowerCase()).toContain('create policy');
    expect(r.text.length).toBeLessThan(30_000);
    const storage = await mcp.text('search-docs', { query: 'createClient storage upload', limit: 1 });
    expect(storage.text).toContain('createClient');
    const none = await mcp.text('search-docs', { query: 'zzqqxxnothing' });
    expect(none.text).toContain('No section matches');
  });

  it('fetch-docs storage-sdk shows the SDK and createClient', async () => {
    const r = await mcp.text('fetch-docs', { docType: 'storage-sdk' });
    expect(r.text).toContain('@insforge/sdk');
    expect(r.text).toContain('createClient');
    expect(r.text).toContain(t.url);
  });

  it('a write refused by row-level security names the table and the policies for that command', async () => {
    await mcp.text('run-raw-sql', {
      query: `create table notes (id serial primary key, owner uuid not null, body text);
        alter table notes enable row level security;
        grant select, insert, update on notes to authenticated;
        grant usage on sequence notes_id_seq to authenticated;
        create policy own_rows on notes for insert to authenticated with check (owner = (select auth.uid()));
        create policy read_own on notes for select to authenticated using (owner = (select auth.uid()))`,
    });
    const user = await mcp.text('create-user', { email: 'rls@example.com', password: 'password-1' });
    const userId = /id ([0-9a-f-]{36})/.exec(user.text)![1];
    const refused = await mcp.text('write-records', {
      table: 'notes',
      method: 'insert',
      query: '',
      body: { owner: '00000000-0000-0000-0000-000000000001', body: 'not mine' },
      as: { role: 'user', userId },
    });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain('"notes"');
    expect(refused.text).toContain('own_rows');
    expect(refused.text).not.toContain('read_own');
    const anon = await mcp.text('write-records', {
      table: 'notes',
      method: 'insert',
      query: '',
      body: { owner: userId, body: 'x' },
      as: { role: 'anon' },
    });
    expect(anon.isError).toBe(true);
    expect(anon.text).toMatch(/anon has no insert privilege/);
    const ok = await mcp.text('write-records', {
      table: 'notes',
      method: 'insert',
      query: '',
      body: { owner: userId, body: 'mine' },
      as: { role: 'user', userId },
    });
    expect(ok.isError, ok.text).toBe(false);
  });
});
