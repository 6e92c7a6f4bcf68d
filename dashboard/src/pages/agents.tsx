// Project › Agents: how to connect an MCP client (Claude Code, Cursor, Codex) to this server's
// /api/mcp.
import { PageHeader } from '../ui';
import { McpConfigs } from './mcp-config';

export function Agents() {
  const url = `${location.origin}/api/mcp`;
  return (
    <section class="stack loose">
      <PageHeader
        title="Agents"
        description={
          <>
            Coding agents manage this project (tables, policies, SQL, functions, storage) through its MCP server at{' '}
            <code>{url}</code>. It takes the admin key as <code>Authorization: Bearer</code>; keep the key in an
            environment variable (<code>PLINTH_ADMIN_KEY</code>), never in a committed file. Add{' '}
            <code>?readonly=1</code> to the URL for an agent that may only read.
          </>
        }
      />
      <McpConfigs />
      <p class="muted">On a server older than the MCP endpoint, the clients report that {url} is not found.</p>
    </section>
  );
}
