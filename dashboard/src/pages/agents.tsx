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
  const url = `${location.origin}/api/mcp`;
  const masked = '$PLINTH_ADMIN_KEY';
  return (
    <section class="stack">
      <h1>Agents</h1>
      <p>
        Coding agents manage this project (tables, policies, SQL, functions, storage) through its MCP server at <code>{url}</code>, authenticated with the
        admin key. Keep the key in an environment variable (<code>PLINTH_ADMIN_KEY</code>), never in a committed file.
      </p>
      <Block
        title="Claude Code"
        note="Run in a terminal, in your project:"
        code={`claude mcp add --transport http plinth ${url} --header "x-api-key: ${masked}"`}
      />
      <Block
        title="Cursor"
        note="In .cursor/mcp.json (Cursor expands ${env:…}):"
        code={JSON.stringify({ mcpServers: { plinth: { url, headers: { 'x-api-key': '${env:PLINTH_ADMIN_KEY}' } } } }, null, 2)}
      />
      <Block
        title="Codex"
        note="In ~/.codex/config.toml:"
        code={`[mcp_servers.plinth]\nurl = "${url}"\nenv_http_headers = { "x-api-key" = "PLINTH_ADMIN_KEY" }`}
      />
      <p class="muted">The MCP endpoint comes with Plinth's Agents release; on an older server the clients report that {url} is not found.</p>
    </section>
  );
}
