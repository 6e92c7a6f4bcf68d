import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { ToolSet } from './registry.js';
import type { McpServices } from './types.js';
import { startAppPrompt } from './prompts.js';

export interface ServerOptions {
  services: McpServices;
  tools: ToolSet;
  baseUrl: string;
  version: string;
  readOnly: boolean;
  /** Hears every unexpected failure inside a tool (for the server log). */
  onToolError?: (tool: string, err: unknown) => void;
}

const INSTRUCTIONS = (readOnly: boolean) =>
  'Plinth backend. Start with fetch-docs {"docType":"instructions"}. Results are compact tables; page with limit/offset. ' +
  "Functions may import packages (npm:, jsr:); the InsForge SDK first: import { createClient } from 'npm:@insforge/sdk'. " +
  (readOnly
    ? 'This connection is READ-ONLY: only tools that change nothing are offered.'
    : 'Tools that change data say so in their annotations (readOnlyHint false).');

/**
 * A protocol error (InvalidParams) whose message is sent as it is. The SDK's McpError puts
 * "MCP error -32602: " into its message, which goes on the wire, and the client's McpError adds
 * it again: "MCP error -32602: MCP error -32602: …". The server sends `code` and `message` of
 * whatever a handler throws.
 */
function invalidParams(message: string): Error {
  return Object.assign(new Error(message), { code: ErrorCode.InvalidParams });
}

/** One MCP server (one per session) over the shared tool set, the docs as resources and the start-app prompt. */
export function createMcpServer(o: ServerOptions): Server {
  const server = new Server(
    { name: 'plinth', version: o.version, title: 'Plinth' },
    { capabilities: { tools: {}, resources: {}, prompts: {} }, instructions: INSTRUCTIONS(o.readOnly) },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: o.tools.listing }));
  server.setRequestHandler(CallToolRequestSchema, (req, extra) => {
    const name = req.params.name;
    // An unknown tool is a protocol error (InvalidParams), as the spec says; everything else is a result.
    if (!o.tools.has(name))
      throw invalidParams(
        `Unknown tool "${name}"${o.readOnly ? ' (or not offered on a read-only connection)' : ''}: tools/list shows the tools.`,
      );
    const ctx = { services: o.services, baseUrl: o.baseUrl, signal: extra.signal };
    return o.tools.call(name, req.params.arguments, ctx, (ok, err) => {
      o.services.usage.record(name, ok, 'plinth');
      if (err !== undefined) o.onToolError?.(name, err);
    });
  });
  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: o.services.docs.list().map((d) => ({
      uri: `plinth://docs/${d.name}`,
      name: d.name,
      title: d.title,
      mimeType: 'text/markdown',
      size: d.chars,
    })),
  }));
  server.setRequestHandler(ReadResourceRequestSchema, (req) => {
    const name = /^plinth:\/\/docs\/([\w-]+)$/.exec(req.params.uri)?.[1];
    if (!name) throw invalidParams(`No resource ${req.params.uri}: resources/list shows them (plinth://docs/<name>).`);
    try {
      return {
        contents: [{ uri: req.params.uri, mimeType: 'text/markdown', text: o.services.docs.page(name, o.baseUrl) }],
      };
    } catch {
      throw invalidParams(`No resource ${req.params.uri}: resources/list shows them.`);
    }
  });
  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: [startAppPrompt.definition] }));
  server.setRequestHandler(GetPromptRequestSchema, (req) => {
    if (req.params.name !== startAppPrompt.definition.name)
      throw invalidParams(`No prompt "${req.params.name}": prompts/list shows them.`);
    return startAppPrompt.render(req.params.arguments ?? {}, o.baseUrl, o.readOnly);
  });
  return server;
}
