import { Type } from 'typebox';
import { tool } from '../types.js';
import { table } from '../format.js';

/** AI usage (the gateway's report of /api/ai/usage) and MCP tool usage (/api/usage/mcp). */
export const aiTools = [
  tool<{ from?: string; to?: string }>({
    name: 'get-ai-usage',
    description:
      'AI gateway usage per user and model (requests, errors, tokens) between two dates (default: everything).',
    input: Type.Object({
      from: Type.Optional(Type.String({ maxLength: 40, description: 'ISO date-time' })),
      to: Type.Optional(Type.String({ maxLength: 40, description: 'ISO date-time' })),
    }),
    readOnly: true,
    run: async (a, ctx) =>
      table(
        await ctx.services.ai.report({
          from: a.from ? new Date(a.from) : null,
          to: a.to ? new Date(a.to) : null,
          userId: null,
        }),
      ),
  }),
  tool<Record<string, never>>({
    name: 'get-mcp-usage',
    description:
      "MCP tool calls of the last 30 days per tool (calls, failures), from this server and from InsForge's MCP server.",
    input: Type.Object({}),
    readOnly: true,
    run: async (_a, ctx) => table(await ctx.services.usage.summary()),
  }),
];
