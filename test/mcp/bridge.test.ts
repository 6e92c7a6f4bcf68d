// The stdio bridge (`npm run plinth -- mcp`): an MCP client on stdio reaches the same tools.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startApp, type TestApp } from '../helpers/app.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

function bridge(t: TestApp, extra: string[] = [], key = t.adminKey): { c: Client; transport: StdioClientTransport } {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', path.join(ROOT, 'src/cli.ts'), 'mcp', '--url', t.url, '--key', key, ...extra],
    cwd: ROOT,
    stderr: 'pipe',
  });
  return { c: new Client({ name: 'bridge-test', version: '1.0.0' }), transport };
}

describe('stdio bridge: npm run plinth -- mcp', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp('embedded');
  });
  afterAll(() => t?.close());

  it('relays initialize, tools/list and tool calls to /api/mcp', async () => {
    const { c, transport } = bridge(t);
    await c.connect(transport);
    try {
      const names = (await c.listTools()).tools.map((x) => x.name);
      expect(names).toContain('run-raw-sql');
      const r = await c.callTool({ name: 'run-raw-sql', arguments: { query: 'select 40 + 2 as answer' } });
      expect((r.content as Array<{ text: string }>)[0]!.text).toContain('| 42 |');
    } finally {
      await c.close();
    }
  }, 30_000);

  it('--readonly offers only the read-only tools', async () => {
    const { c, transport } = bridge(t, ['--readonly']);
    await c.connect(transport);
    try {
      const names = (await c.listTools()).tools.map((x) => x.name);
      expect(names).toContain('list-tables');
      expect(names).not.toContain('run-raw-sql');
    } finally {
      await c.close();
    }
  }, 30_000);

  it("a wrong key fails the connection with the server's 401", async () => {
    const { c, transport } = bridge(t, [], 'ik_not_the_key');
    await expect(c.connect(transport)).rejects.toThrow(/401|admin key|Unauthorized|UNAUTHORIZED/i);
    await c.close();
  }, 30_000);

  it('gen types --url --key prints the Database type of a running server', async () => {
    const { execFile } = await import('node:child_process');
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ['--import', 'tsx', path.join(ROOT, 'src/cli.ts'), 'gen', 'types', '--url', t.url, '--key', t.adminKey],
        { cwd: ROOT },
        (err, stdout, stderr) => (err ? reject(new Error(stderr)) : resolve(stdout)),
      ),
    );
    expect(out).toContain('export type Database = {');
  }, 30_000);

  it("runs as documented, `npm run plinth -- mcp` on the built dist/cli.js (npm's header line on stdout is skipped by the client)", async () => {
    const transport = new StdioClientTransport({
      command: 'npm',
      args: ['run', 'plinth', '--', 'mcp', '--url', t.url, '--key', t.adminKey],
      cwd: ROOT,
      stderr: 'pipe',
    });
    const c = new Client({ name: 'npm-run', version: '1.0.0' });
    await c.connect(transport);
    try {
      expect((await c.listTools()).tools.length).toBeGreaterThan(20);
    } finally {
      await c.close();
    }
  }, 30_000);
});

describe('shutdown with MCP clients connected', () => {
  it('closing the server ends the open sessions and their event streams instead of waiting for them', async () => {
    const { mcpClient } = await import('./helpers.js');
    const t = await startApp('embedded');
    const c = await mcpClient(t);
    await c.listTools();
    // Give the client time to open its GET event stream.
    await new Promise((r) => setTimeout(r, 300));
    const closed = await Promise.race([
      t.close().then(() => 'closed'),
      new Promise((r) => setTimeout(() => r('hung'), 10_000)),
    ]);
    expect(closed).toBe('closed');
    await c.close().catch(() => {});
  }, 30_000);
});
