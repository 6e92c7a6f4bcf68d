// The docs for agents (/llms.txt, /api/docs…), the InsForge paths beside them, and the limits of the MCP endpoint.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { call } from '../helpers/http.js';
import { mcpClient } from './helpers.js';

describe.each(backends())('docs for agents and InsForge paths (%s)', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp(backend, { MCP_MAX_SESSIONS: '2' });
  });
  afterAll(() => t?.close());
  const admin = () => ({ 'x-api-key': t.adminKey });

  it('/llms.txt and /llms-full.txt name this instance and link every page', async () => {
    const r = await call(t, 'GET', '/llms.txt');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('text/markdown');
    const text = r.text;
    expect(text).toMatch(/^# Plinth/);
    expect(text).toContain(`${t.url}/api/mcp`);
    expect(text).toContain(`(${t.url}/api/docs/database)`);
    const full = (await call(t, 'GET', '/llms-full.txt')).text;
    expect(full.length).toBeGreaterThan(50_000);
    expect(full).not.toContain('http://localhost:7130');
  });

  it('GET /api/docs lists the pages; /api/docs/{docType} and /{feature}/{language} answer {content}', async () => {
    const list = (await call(t, 'GET', '/api/docs')).body as { docs: Array<{ name: string }> };
    const names = list.docs.map((d) => d.name);
    for (const n of ['database', 'auth', 'mcp', 'agents-instructions', 'instructions', 'db-sdk'])
      expect(names).toContain(n);
    const page = (await call(t, 'GET', '/api/docs/db-sdk')).body as { content: string };
    expect(page.content).toMatch(/^# /);
    const ts = (await call(t, 'GET', '/api/docs/auth/typescript')).body as { content: string };
    expect(ts.content).toContain('auth');
    const rest = (await call(t, 'GET', '/api/docs/functions/rest-api')).body as { content: string };
    expect(rest.content).toContain('`POST /api/functions`');
    expect(rest.content).toContain(t.url);
  });

  it('an unknown page is a 404 with the JSON envelope (InsForge parses every answer)', async () => {
    for (const p of ['/api/docs/nope', '/api/docs/db/swift', '/api/docs/nope/typescript']) {
      const r = await call(t, 'GET', p);
      expect(r.status, p).toBe(404);
      expect(r.body).toMatchObject({
        statusCode: 404,
        error: 'DOC_NOT_FOUND',
        nextActions: expect.any(String),
      });
    }
  });

  it('POST /api/auth/tokens/anon takes an empty JSON body and answers {accessToken}; admin only', async () => {
    const empty = { 'content-type': 'application/json' };
    const r = await call(t, 'POST', '/api/auth/tokens/anon', { headers: { ...admin(), ...empty } });
    expect(r.status).toBe(200);
    expect(r.body.accessToken).toBe(t.anonKey);
    const anon = await call(t, 'POST', '/api/auth/tokens/anon', { headers: { apikey: t.anonKey, ...empty } });
    expect(anon.status).toBe(403);
    // Elsewhere an empty JSON body is still a 400.
    const other = await call(t, 'POST', '/api/usage/mcp', { headers: { ...admin(), ...empty } });
    expect(other.status).toBe(400);
  });

  it("rawsql answers {rows, rowCount, fields}; bad SQL is a 400 with Postgres's text", async () => {
    const sql = (query: string) =>
      call(t, 'POST', '/api/database/advance/rawsql', { headers: admin(), body: { query } });
    const r = await sql("select 1 as a, 'x'::text as b");
    expect(r.body).toEqual({
      rows: [{ a: 1, b: 'x' }],
      rowCount: 1,
      fields: [
        { name: 'a', dataTypeID: 23 },
        { name: 'b', dataTypeID: 25 },
      ],
    });
    const bad = await sql('select nope from nowhere');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('relation "nowhere" does not exist');
  });

  it('bulk-upsert: CSV and JSON files, upsertKey, and 4xx for a bad form, file or table', async () => {
    await call(t, 'POST', '/api/database/advance/rawsql', {
      headers: admin(),
      body: { query: 'create table stock (sku text primary key, qty int, note text)' },
    });
    const upload = (file: string, name: string, fields: Record<string, string>) => {
      const form = new FormData();
      form.append('file', new Blob([file]), name);
      for (const [k, v] of Object.entries(fields)) form.append(k, v);
      return t.fetch('/api/database/advance/bulk-upsert', { method: 'POST', headers: admin(), body: form });
    };
    const r = await upload('sku,qty,note\na,1,"x, y"\nb,,\n', 'stock.csv', { table: 'stock' });
    expect(await r.json()).toEqual({
      success: true,
      rowsAffected: 2,
      totalRecords: 2,
      table: 'stock',
      message: expect.any(String),
      filename: 'stock.csv',
    });
    const up = await upload(JSON.stringify([{ sku: 'b', qty: 9 }]), 'stock.json', { table: 'stock', upsertKey: 'sku' });
    expect((await up.json()).rowsAffected).toBe(1);
    const rows = (await call(t, 'GET', '/api/database/records/stock?order=sku', { headers: admin() })).body;
    expect(rows).toEqual([
      { sku: 'a', qty: 1, note: 'x, y' },
      { sku: 'b', qty: 9, note: null },
    ]);
    const cases: Array<[Promise<Response>, number, string]> = [
      [upload('a,b', 'x.txt', { table: 'stock' }), 400, 'INVALID_BULK_FILE'],
      [upload('{"a":1}', 'x.json', { table: 'stock' }), 400, 'INVALID_BULK_FILE'],
      [upload('sku\n"unclosed', 'x.csv', { table: 'stock' }), 400, 'INVALID_BULK_FILE'],
      [upload('sku\na', 'x.csv', {}), 400, 'INVALID_BULK_FILE'],
      [upload('sku\na', 'x.csv', { table: 'nope' }), 404, 'TABLE_NOT_FOUND'],
      [upload('sku,zzz\na,1', 'x.csv', { table: 'stock' }), 400, 'UNKNOWN_COLUMN'],
      [
        t.fetch('/api/database/advance/bulk-upsert', {
          method: 'POST',
          headers: { ...admin(), 'content-type': 'application/json' },
          body: '{}',
        }),
        400,
        'INVALID_BULK_FILE',
      ],
    ];
    for (const [p, status, code] of cases) {
      const res = await p;
      const body = await res.json();
      expect([res.status, body.error], JSON.stringify(body)).toEqual([status, code]);
    }
  });

  it('/api/usage/mcp records calls and reports them per tool', async () => {
    const post = await call(t, 'POST', '/api/usage/mcp', {
      headers: admin(),
      body: { tool_name: 'fetch-docs', success: true, timestamp: new Date().toISOString() },
    });
    expect(post.body).toEqual({ success: true });
    const { tools } = (await call(t, 'GET', '/api/usage/mcp', { headers: admin() })).body;
    expect(tools).toContainEqual({ tool: 'fetch-docs', source: 'client', calls: 1, failures: 0 });
  });

  it('/api/deployments answers 501 NOT_SUPPORTED with a next action', async () => {
    const r = await call(t, 'POST', '/api/deployments', { headers: admin(), body: {} });
    expect(r.status).toBe(501);
    expect(r.body.error).toBe('NOT_SUPPORTED');
  });

  it('past MCP_MAX_SESSIONS a new session is a 503; a cancelled call leaves the session working', async () => {
    const a = await mcpClient(t);
    const b = await mcpClient(t);
    await expect(mcpClient(t)).rejects.toThrow(/503|MCP_TOO_MANY_SESSIONS|Too many/);
    const ac = new AbortController();
    const slow = a.callTool({ name: 'run-raw-sql', arguments: { query: 'select pg_sleep(1)' } }, undefined, {
      signal: ac.signal,
    });
    setTimeout(() => ac.abort('changed my mind'), 100);
    await expect(slow).rejects.toThrow();
    expect((await a.text('run-raw-sql', { query: 'select 2 as two' })).text).toContain('| 2 |');
    await a.close();
    await b.close();
  });
});
