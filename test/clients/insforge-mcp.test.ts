// InsForge's own MCP server (@insforge/mcp, unchanged) driven over stdio by the MCP SDK's
// client, pointed at Plinth with API_BASE_URL and API_KEY as its users configure it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';

const BIN = path.join(
  path.dirname(createRequire(import.meta.url).resolve('@insforge/mcp/package.json')),
  'dist/index.js',
);

describe.each(backends())('@insforge/mcp against Plinth (%s)', (backend) => {
  let t: TestApp;
  let client: Client;
  let dir: string;
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const r = await client.callTool({ name, arguments: args });
    return { text: (r.content as Array<{ text: string }>).map((c) => c.text).join('\n'), isError: r.isError === true };
  };

  beforeAll(async () => {
    t = await startApp(backend);
    dir = mkdtempSync(path.join(tmpdir(), 'insforge-mcp-'));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN],
      env: { ...(process.env as Record<string, string>), API_BASE_URL: t.url, API_KEY: t.adminKey },
      stderr: 'ignore',
    });
    client = new Client({ name: 'plinth-compat', version: '1.0.0' });
    await client.connect(transport);
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('registers every self-hosted tool, fetch-sdk-docs included (health version >= 1.5.1)', async () => {
    const names = (await client.listTools()).tools.map((x) => x.name);
    for (const n of [
      'fetch-docs',
      'fetch-sdk-docs',
      'get-anon-key',
      'get-table-schema',
      'get-backend-metadata',
      'run-raw-sql',
      'bulk-upsert',
      'create-bucket',
      'list-buckets',
      'delete-bucket',
      'create-function',
      'get-function',
      'update-function',
      'delete-function',
      'get-container-logs',
    ]) {
      expect(names).toContain(n);
    }
  });

  it('fetch-docs and fetch-sdk-docs read the instance docs, with its base URL', async () => {
    const d = await call('fetch-docs', { docType: 'instructions' });
    expect(d.isError).toBe(false);
    expect(d.text).toContain('instructions for agents');
    expect(d.text).toContain(t.url);
    // The storage step of an agent's run: the page must show the SDK and its client.
    const storage = await call('fetch-docs', { docType: 'storage-sdk' });
    expect(storage.isError, storage.text).toBe(false);
    expect(storage.text).toContain('@insforge/sdk');
    expect(storage.text).toContain('createClient');
    const db = await call('fetch-docs', { docType: 'db-sdk' });
    expect(db.text.length).toBeGreaterThan(1000);
    const rest = await call('fetch-sdk-docs', { sdkFeature: 'storage', sdkLanguage: 'rest-api' });
    expect(rest.text).toContain('/api/storage/buckets');
    const swift = await call('fetch-sdk-docs', { sdkFeature: 'db', sdkLanguage: 'swift' });
    expect(swift.text).toContain('not available');
  });

  it('get-anon-key answers the anon key', async () => {
    const r = await call('get-anon-key');
    expect(r.isError).toBe(false);
    expect(r.text).toContain(t.anonKey);
  });

  it("run-raw-sql answers rows, rowCount and fields; bad SQL is an error with Postgres's text", async () => {
    const r = await call('run-raw-sql', { query: 'select $1::int as n', params: [7] });
    expect(r.isError).toBe(false);
    expect(r.text).toMatch(/"rowCount": 1/);
    expect(r.text).toMatch(/"dataTypeID": 23/);
    const bad = await call('run-raw-sql', { query: 'select * from no_such_table' });
    expect(bad.isError).toBe(true);
    expect(bad.text).toContain('no_such_table');
  });

  it('bulk-upsert loads a CSV file and upserts a JSON file by key', async () => {
    await call('run-raw-sql', { query: 'create table products (sku text primary key, name text, price numeric)' });
    const csv = path.join(dir, 'products.csv');
    writeFileSync(csv, 'sku,name,price\np1,"Pen, blue",1.5\np2,Pad,\n');
    const r = await call('bulk-upsert', { table: 'products', filePath: csv });
    expect(r.isError, r.text).toBe(false);
    expect(r.text).toContain('Successfully processed 2 of 2 records into table "products"');
    const json = path.join(dir, 'products.json');
    writeFileSync(json, JSON.stringify([{ sku: 'p2', name: 'Pad', price: 3 }]));
    expect((await call('bulk-upsert', { table: 'products', filePath: json, upsertKey: 'sku' })).isError).toBe(false);
    const rows = await call('run-raw-sql', { query: 'select name, price::float8 from products order by sku' });
    expect(rows.text).toContain('"Pen, blue"');
    expect(rows.text).toMatch(/"price": 3/);
    const bad = await call('bulk-upsert', { table: 'products', filePath: csv.replace('.csv', '.txt') });
    expect(bad.isError).toBe(true);
  });

  it('buckets: create, list, delete', async () => {
    expect((await call('create-bucket', { bucketName: 'avatars', isPublic: true })).isError).toBe(false);
    expect((await call('list-buckets')).text).toContain('avatars');
    expect((await call('delete-bucket', { bucketName: 'avatars' })).isError).toBe(false);
    const again = await call('delete-bucket', { bucketName: 'avatars' });
    expect(again.isError).toBe(true);
  });

  it('functions: create from a file, get, update, delete', async () => {
    const file = path.join(dir, 'hello.ts');
    writeFileSync(file, 'export default async function () { return new Response("hi"); }\n');
    const c = await call('create-function', { name: 'Hello', slug: 'hello', codeFile: file });
    expect(c.isError, c.text).toBe(false);
    expect((await call('get-function', { slug: 'hello' })).text).toContain('new Response(\\"hi\\")');
    writeFileSync(file, 'export default async function () { return new Response("hi again"); }\n');
    expect((await call('update-function', { slug: 'hello', codeFile: file })).isError).toBe(false);
    expect((await call('get-function', { slug: 'hello' })).text).toContain('hi again');
    expect((await call('delete-function', { slug: 'hello' })).isError).toBe(false);
  });

  it('reports each tool call to /api/usage/mcp', async () => {
    await new Promise((r) => setTimeout(r, 300));
    const r = await t.fetch('/api/usage/mcp', { headers: { 'x-api-key': t.adminKey } });
    const { tools } = (await r.json()) as { tools: Array<{ tool: string; source: string; calls: number }> };
    expect(tools.find((x) => x.tool === 'run-raw-sql' && x.source === 'client')?.calls).toBeGreaterThan(0);
  });

  it('create-deployment answers a clear error: Plinth hosts no sites', async () => {
    const r = await call('create-deployment', { sourceDirectory: dir });
    expect(r.isError).toBe(true);
  });

  it('get-backend-metadata and get-table-schema read /api/metadata', async () => {
    await call('run-raw-sql', { query: 'create table if not exists meta_t (id int primary key, label text not null)' });
    const all = await call('get-backend-metadata');
    expect(all.isError, all.text).toBe(false);
    expect(all.text).toContain('meta_t');
    const s = await call('get-table-schema', { tableName: 'meta_t' });
    expect(s.isError, s.text).toBe(false);
    expect(s.text).toContain('"tableName": "meta_t"');
    expect(s.text).toContain('"columnName": "label"');
    const missing = await call('get-table-schema', { tableName: 'no_such_table' });
    expect(missing.isError).toBe(true);
  });

  it("get-container-logs reads /api/logs/{source} by InsForge's source names", async () => {
    await t.fetch('/api/health');
    await new Promise((r) => setTimeout(r, 1500));
    const r = await call('get-container-logs', { source: 'insforge.logs', limit: 5 });
    expect(r.isError, r.text).toBe(false);
    expect(r.text).toContain('/api/health');
    const pg = await call('get-container-logs', { source: 'postgres.logs', limit: 5 });
    expect(pg.isError, pg.text).toBe(false);
  });
});
