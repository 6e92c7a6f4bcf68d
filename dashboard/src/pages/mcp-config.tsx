// The MCP configuration of Claude Code, Cursor and Codex for this server's /api/mcp (the Agents
// and Connect pages show the same blocks).
import { Snippet } from '../components/snippet';

export function McpConfigs() {
  const origin = location.origin;
  const url = `${origin}/api/mcp`;
  return (
    <>
      <Snippet
        title="Claude Code"
        label="Claude Code config"
        note="Run in a terminal, in your project:"
        code={`claude mcp add --transport http plinth ${url} --header "Authorization: Bearer $PLINTH_ADMIN_KEY"`}
      />
      <Snippet
        title="Cursor"
        label="Cursor config"
        note="In .cursor/mcp.json (Cursor expands ${env:…}):"
        code={JSON.stringify(
          { mcpServers: { plinth: { url, headers: { Authorization: 'Bearer ${env:PLINTH_ADMIN_KEY}' } } } },
          null,
          2,
        )}
      />
      <Snippet
        title="Codex"
        label="Codex config"
        note="In ~/.codex/config.toml: Codex starts stdio servers, so it runs Plinth's bridge (from a checkout of Plinth), which reads the key from PLINTH_ADMIN_KEY (this file is yours, outside any repository):"
        code={`[mcp_servers.plinth]\ncommand = "node"\nargs = ["/path/to/plinth/dist/cli.js", "mcp", "--url", "${origin}"]\nenv = { PLINTH_ADMIN_KEY = "ik_..." }`}
      />
    </>
  );
}
