// How to connect an MCP client (Claude Code, Cursor, Codex) to this server's /api/mcp.
import { CopyButton } from '../ui';

function Block({ title, code, note }: { title: string; code: string; note: string }) {
  return (
    <div class="stack">
      <div class="row">
        <h2>{title}</h2>
        <CopyButton text={code} label={`Copy the ${title} config`} />
      </div>
      <p class="muted">{note}</p>
      <pre class="snippet" tabIndex={0} aria-label={`${title} config`}>{code}</pre>
    </div>
  );
}

export function Agents() {
  const origin = location.origin;
  const url = `${origin}/api/mcp`;
  return (
    <section class="stack">
      <h1>Agents</h1>
      <p>
        Coding agents manage this project (tables, policies, SQL, functions, storage) through its MCP server at <code>{url}</code>. It takes the admin key
        as <code>Authorization: Bearer</code>; keep the key in an environment variable (<code>PLINTH_ADMIN_KEY</code>), never in a committed file. Add{' '}
        <code>?readonly=1</code> to the URL for an agent that may only read.
      </p>
      <Block title="Claude Code" note="Run in a terminal, in your project:" code={`claude mcp add --transport http plinth ${url} --header "Authorization: Bearer $PLINTH_ADMIN_KEY"`} />
      <Block
        title="Cursor"
        note="In .cursor/mcp.json (Cursor expands ${env:…}):"
        code={JSON.stringify({ mcpServers: { plinth: { url, headers: { Authorization: 'Bearer ${env:PLINTH_ADMIN_KEY}' } } } }, null, 2)}
      />
      <Block
        title="Codex"
        note="In ~/.codex/config.toml: Codex starts stdio servers, so it runs Plinth's bridge (from a checkout of Plinth), which reads the key from PLINTH_ADMIN_KEY (this file is yours, outside any repository):"
        code={`[mcp_servers.plinth]\ncommand = "node"\nargs = ["/path/to/plinth/dist/cli.js", "mcp", "--url", "${origin}"]\nenv = { PLINTH_ADMIN_KEY = "ik_..." }`}
      />
      <p class="muted">On a server older than the MCP endpoint, the clients report that {url} is not found.</p>
    </section>
  );
}
