-- MCP: one row per tool call, from Plinth's own MCP server (source 'plinth') and from
-- InsForge's MCP server reporting through POST /api/usage/mcp (source 'client').
create schema if not exists mcp;
revoke all on schema mcp from public;

create table if not exists mcp.tool_calls (
  id bigint generated always as identity primary key,
  created_at timestamptz not null default now(),
  tool text not null check (length(tool) between 1 and 100),
  success boolean not null,
  source text not null check (source in ('plinth', 'client'))
);
create index if not exists tool_calls_created_at on mcp.tool_calls (created_at);
