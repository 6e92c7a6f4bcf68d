import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TestApp } from '../helpers/app.js';

export type McpClient = Client & {
  text(name: string, args?: Record<string, unknown>): Promise<{ text: string; isError: boolean }>;
};

/** An MCP client (the official SDK) connected to the test server's /api/mcp with the admin key (or `key`). */
export async function mcpClient(t: TestApp, opts: { readOnly?: boolean; key?: string } = {}): Promise<McpClient> {
  const url = new URL(`${t.url}/api/mcp${opts.readOnly ? '?readonly=1' : ''}`);
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { authorization: `Bearer ${opts.key ?? t.adminKey}` } },
  });
  const client = new Client({ name: 'plinth-test', version: '1.0.0' }) as McpClient;
  await client.connect(transport);
  client.text = async (name, args = {}) => {
    const r = await client.callTool({ name, arguments: args });
    const content = r.content as Array<{ type: string; text: string }>;
    return { text: content.map((c) => c.text).join('\n'), isError: r.isError === true };
  };
  return client;
}
