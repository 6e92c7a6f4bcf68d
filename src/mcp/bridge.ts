// `npm run plinth -- mcp --url … --key …`: an MCP server on stdio for clients that speak only
// stdio, relaying every message to the Streamable HTTP server at <url>/api/mcp and back.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export interface BridgeOptions {
  url: string;
  key: string;
  readOnly?: boolean;
  /** Where the bridge reports problems (never stdout: that is the protocol's). */
  log?: (line: string) => void;
}

/** Relays stdio ⇄ HTTP until stdin ends; resolves when either side closes. */
export async function runBridge(o: BridgeOptions): Promise<void> {
  const log = o.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const endpoint = new URL('/api/mcp', o.url);
  if (o.readOnly) endpoint.searchParams.set('readonly', '1');
  const http = new StreamableHTTPClientTransport(endpoint, {
    requestInit: { headers: { authorization: `Bearer ${o.key}` } },
  });
  const stdio = new StdioServerTransport();
  let done!: () => void;
  const closed = new Promise<void>((resolve) => (done = resolve));
  stdio.onmessage = (message) => {
    http.send(message).catch((err: Error) => {
      log(`plinth mcp: ${err.message}`);
      // A request that could not be delivered still gets an answer, so the client does not hang.
      if ('id' in message && 'method' in message)
        void stdio.send({
          jsonrpc: '2.0',
          id: message.id,
          error: { code: -32603, message: `Plinth at ${o.url} did not answer: ${err.message}` },
        });
    });
  };
  http.onmessage = (message) => void stdio.send(message);
  http.onerror = (err) => log(`plinth mcp: ${err.message}`);
  stdio.onclose = () => {
    void http
      .terminateSession()
      .catch(() => {})
      .finally(() => http.close().finally(done));
  };
  http.onclose = () => done();
  await http.start();
  await stdio.start();
  // The SDK's stdio transport does not watch for the end of stdin: a client that closes its end
  // (or a parent such as npm that goes away) must end the bridge and its session too.
  process.stdin.once('end', () => void stdio.close());
  await closed;
}
