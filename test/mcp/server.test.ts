import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { at, call } from '../helpers/http.js';
import { mcpClient, type McpClient } from './helpers.js';

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const post = (t: TestApp, headers: Record<string, string>, body: unknown = INIT) =>
  t.fetch('/api/mcp', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });

describe.each(backends())('MCP server at /api/mcp (%s)', (backend) => {
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

  it('refuses every caller but the admin key with 401, before any tool', async () => {
    const callers: Array<Record<string, string>> = [
      {},
      { authorization: `Bearer ${t.anonKey}` },
      { authorization: 'Bearer ik_wrong' },
      { apikey: t.anonKey },
    ];
    for (const headers of callers) {
      const r = await post(t, headers);
      expect(r.status, JSON.stringify(headers)).toBe(401);
      expect(await r.json()).toMatchObject({ statusCode: 401, nextActions: expect.any(String) });
    }
  });

  it('answers browsers with CORS headers that expose Mcp-Session-Id, and the request id', async () => {
    const r = await post(t, { authorization: `Bearer ${t.adminKey}`, origin: 'http://localhost:6274' });
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBe('http://localhost:6274');
    expect(r.headers.get('access-control-expose-headers')).toContain('Mcp-Session-Id');
    expect(r.headers.get('mcp-session-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.headers.get('x-request-id')).toBeTruthy();
    await r.text();
  });

  it('an unknown session is a 404 with the envelope; a request without a session must be initialize', async () => {
    const r = await post(
      t,
      { authorization: `Bearer ${t.adminKey}`, 'mcp-session-id': 'nope' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    );
    expect(r.status).toBe(404);
    expect((await r.json()).error).toBe('MCP_SESSION_NOT_FOUND');
    const r2 = await post(
      t,
      { authorization: `Bearer ${t.adminKey}` },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    );
    expect(r2.status).toBe(400);
  });

  it('lists the tools with input schemas and read-only annotations', async () => {
    const { tools } = await mcp.listTools();
    const names = tools.map((x) => x.name);
    for (const n of [
      'fetch-docs',
      'get-table-schema',
      'run-raw-sql',
      'bulk-upsert',
      'create-bucket',
      'list-buckets',
      'delete-bucket',
      'create-function',
      'get-function',
      'update-function',
      'delete-function',
      'get-anon-key',
      'set-secret',
      'list-secrets',
      'delete-secret',
      'select-records',
      'write-records',
      'list-objects',
      'get-object-url',
      'list-users',
      'create-user',
      'invoke-function',
      'get-function-logs',
      'get-ai-usage',
      'generate-typescript-types',
    ]) {
      expect(names).toContain(n);
    }
    const sql = tools.find((x) => x.name === 'run-raw-sql')!;
    expect(sql.inputSchema).toMatchObject({ type: 'object', required: ['query'] });
    expect(sql.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(tools.every((x) => typeof x.description === 'string' && x.description.length > 20)).toBe(true);
  });

  it('read-only connections are offered only tools that change nothing, and cannot call the others', async () => {
    const ro = await mcpClient(t, { readOnly: true });
    try {
      const names = (await ro.listTools()).tools.map((x) => x.name);
      expect(names).toContain('select-records');
      expect(names).not.toContain('run-raw-sql');
      expect(names).not.toContain('write-records');
      await expect(ro.callTool({ name: 'run-raw-sql', arguments: { query: 'drop table x' } })).rejects.toThrow(
        /Unknown tool/,
      );
    } finally {
      await ro.close();
    }
  });

  it("runs SQL and answers a compact table; bad SQL is an error result with Postgres's text and a next action", async () => {
    const ok = await mcp.text('run-raw-sql', { query: 'select $1::int + 1 as n, $2::text as s', params: [41, 'x'] });
    expect(ok.isError).toBe(false);
    expect(ok.text).toContain('| n | s |');
    expect(ok.text).toContain('| 42 | x |');
    const bad = await mcp.text('run-raw-sql', { query: 'selec 1' });
    expect(bad.isError).toBe(true);
    expect(bad.text).toMatch(/SQL_ERROR \(400\): SQLSTATE 42601.*syntax error/);
    expect(bad.text).toContain('Next:');
  });

  it('bad arguments are an error result naming the problem, not a crash', async () => {
    const r = await mcp.text('get-table-schema', { tableName: 42 });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/INVALID_ARGUMENTS: \/tableName/);
    const missing = await mcp.text('get-table-schema', { tableName: 'no_such_table' });
    expect(missing.isError).toBe(true);
    expect(missing.text).toMatch(/TABLE_NOT_FOUND \(404\)/);
  });

  it('RLS tried as two users: each sees only their own rows, anon none', async () => {
    await mcp.text('run-raw-sql', {
      query:
        'create table notes (id uuid primary key default gen_random_uuid(), owner uuid not null default auth.uid(), body text)',
    });
    await mcp.text('run-raw-sql', { query: 'alter table notes enable row level security' });
    await mcp.text('run-raw-sql', { query: 'grant select, insert, update, delete on notes to anon, authenticated' });
    await mcp.text('run-raw-sql', {
      query:
        'create policy own on notes for all to authenticated using (owner = auth.uid()) with check (owner = auth.uid())',
    });
    const id = async (email: string) =>
      /id ([0-9a-f-]{36})/.exec((await mcp.text('create-user', { email, password: 'password-1' })).text)![1]!;
    const [a, b] = [await id('a-mcp@example.com'), await id('b-mcp@example.com')];
    const w = await mcp.text('write-records', {
      table: 'notes',
      method: 'insert',
      body: { body: 'from A' },
      as: { role: 'user', userId: a },
    });
    expect(w.text).toContain('inserted 1');
    expect((await mcp.text('select-records', { table: 'notes', as: { role: 'user', userId: a } })).text).toContain(
      'from A',
    );
    expect((await mcp.text('select-records', { table: 'notes', as: { role: 'user', userId: b } })).text).toContain(
      '(no rows)',
    );
    expect((await mcp.text('select-records', { table: 'notes', as: { role: 'anon' } })).text).toContain('(no rows)');
    const forged = await mcp.text('write-records', {
      table: 'notes',
      method: 'insert',
      body: { body: 'as A', owner: a },
      as: { role: 'user', userId: b },
    });
    expect(forged.isError).toBe(true);
    const schema = await mcp.text('get-table-schema', { tableName: 'notes' });
    expect(schema.text).toContain('RLS on');
    expect(schema.text).toContain('own');
  });

  it('buckets, secrets (names only, never values), anon key, bulk upsert and types', async () => {
    expect((await mcp.text('create-bucket', { bucketName: 'pics', isPublic: false })).text).toContain('private');
    expect((await mcp.text('list-buckets')).text).toContain('pics');
    await mcp.text('set-secret', { name: 'STRIPE_KEY', value: 'sk_live_supersecret' });
    const secrets = await mcp.text('list-secrets');
    expect(secrets.text).toContain('STRIPE_KEY');
    expect(secrets.text).not.toContain('supersecret');
    expect((await mcp.text('get-anon-key')).text).toBe(t.anonKey);
    await mcp.text('run-raw-sql', { query: 'create table items (sku text primary key, qty int)' });
    const up = await mcp.text('bulk-upsert', { table: 'items', format: 'csv', data: 'sku,qty\na,1\nb,2\n' });
    expect(JSON.parse(up.text)).toMatchObject({ success: true, rowsAffected: 2, totalRecords: 2 });
    await mcp.text('bulk-upsert', { table: 'items', format: 'json', data: '[{"sku":"a","qty":5}]', upsertKey: 'sku' });
    expect((await mcp.text('run-raw-sql', { query: "select qty from items where sku = 'a'" })).text).toContain('| 5 |');
    // Bigger than the API's default body limit (1 MiB): the MCP endpoint takes files as text.
    const big = `sku,qty\n${Array.from({ length: 120_000 }, (_, i) => `k${i},${i}`).join('\n')}\n`;
    expect(big.length).toBeGreaterThan(1024 * 1024);
    const many = await mcp.text('bulk-upsert', { table: 'items', format: 'csv', data: big });
    expect(many.isError).toBe(true);
    expect(many.text).toContain('at most 50000 go in one file');
    const types = await mcp.text('generate-typescript-types');
    expect(types.text).toContain('items: {');
    expect(types.text).toContain('qty: number | null');
    expect((await mcp.text('delete-bucket', { bucketName: 'pics' })).isError).toBe(false);
  });

  it('storage objects: list and a signed URL that downloads a private object; AI and MCP usage', async () => {
    await mcp.text('create-bucket', { bucketName: 'docs-private', isPublic: false });
    const form = new FormData();
    form.append('file', new Blob(['hello agent']), 'a.txt');
    const up = await t.fetch('/api/storage/buckets/docs-private/objects/notes/a.txt', {
      method: 'PUT',
      headers: { 'x-api-key': t.adminKey },
      body: form,
    });
    expect(up.status).toBeLessThan(300);
    const list = await mcp.text('list-objects', { bucketName: 'docs-private', prefix: 'notes/' });
    expect(list.text).toContain('notes/a.txt');
    expect(list.text).toContain('of 1');
    const url = (
      await mcp.text('get-object-url', { bucketName: 'docs-private', key: 'notes/a.txt', expiresIn: 60 })
    ).text.split('\n')[0]!;
    expect(url).toContain('token=');
    expect((await call(at(url), 'GET', '')).text).toBe('hello agent');
    expect((await call(at(url.replace(/token=[^&]+/, 'token=forged')), 'GET', '')).status).toBe(403);
    expect((await mcp.text('get-ai-usage')).isError).toBe(false);
    expect((await mcp.text('get-mcp-usage')).text).toContain('create-bucket');
  });

  it('docs as a tool, as resources, and the start-app prompt', async () => {
    const d = await mcp.text('fetch-docs', { docType: 'instructions' });
    expect(d.text).toContain('instructions for agents');
    expect(d.text).toContain(t.url);
    expect(d.text).not.toContain('localhost:7130');
    const { resources } = await mcp.listResources();
    expect(resources.map((r) => r.uri)).toContain('plinth://docs/database');
    const page = await mcp.readResource({ uri: 'plinth://docs/database' });
    expect((page.contents[0] as { text: string }).text.length).toBeGreaterThan(1000);
    const p = await mcp.getPrompt({ name: 'start-app', arguments: { idea: 'a todo app' } });
    expect((p.messages[0]!.content as { text: string }).text).toContain('a todo app');
  });

  it('a DELETE ends the session: its id is then unknown', async () => {
    const c = await mcpClient(t);
    const transport = c.transport as unknown as { sessionId: string; terminateSession(): Promise<void> };
    const id = transport.sessionId;
    await transport.terminateSession();
    const r = await post(
      t,
      { authorization: `Bearer ${t.adminKey}`, 'mcp-session-id': id },
      { jsonrpc: '2.0', id: 3, method: 'tools/list' },
    );
    expect(r.status).toBe(404);
    await c.close();
  });
});
