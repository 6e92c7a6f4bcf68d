import { Value } from 'typebox/value';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../errors/index.js';
import { readOnlyDatabase } from '../db/read-only.js';
import type { McpTool, ToolContext } from './types.js';
import { forMcp } from './next-actions.js';

/**
 * What the error of a tool call tells the agent: the server's message and what to do next, with
 * the routes and commands it has a tool for (`has`) named as those tools.
 */
export function errorText(err: unknown, has: (tool: string) => boolean = () => false): string {
  if (err instanceof AppError) {
    const b = err.toBody();
    return `${b.error} (${b.statusCode}): ${forMcp(b.message, has)}\nNext: ${forMcp(b.nextActions, has)}`;
  }
  if (err instanceof Error && err.name === 'AbortError') return 'The call was cancelled.';
  // Unknown errors are not shown: they may carry internals (the same rule as a 500 body).
  return 'INTERNAL_ERROR (500): the call failed inside the server.\nNext: try again; if it keeps failing, the operator finds the cause in the server log.';
}

/** The schema a client sees: a property with a default is not required (TypeBox lists it as required). */
function advertised(schema: McpTool['input']): Tool['inputSchema'] {
  const s = schema as unknown as { properties?: Record<string, { default?: unknown }>; required?: string[] };
  const required = (s.required ?? []).filter((name) => s.properties?.[name]?.default === undefined);
  return { ...(schema as object), type: 'object', required } as Tool['inputSchema'];
}

/**
 * The tools of one connection mode (all, or read-only): their MCP descriptions computed once
 * (tools/list answers the same array every time), calls checked against the input schema.
 */
export class ToolSet {
  private readonly byName: Map<string, McpTool>;
  readonly listing: Tool[];

  constructor(
    tools: readonly McpTool[],
    private readonly readOnly: boolean,
  ) {
    const offered = tools.filter((t) => !readOnly || t.readOnly);
    this.byName = new Map(offered.map((t) => [t.name, t]));
    this.listing = offered.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: advertised(t.input),
      annotations: { readOnlyHint: t.readOnly, destructiveHint: t.destructive ?? false, openWorldHint: false },
    }));
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /**
   * Runs a tool. Every failure, bad arguments included, is a result with isError and the
   * server's message (MCP: tool errors are results the model can read, not protocol errors).
   */
  async call(
    name: string,
    rawArgs: unknown,
    ctx: ToolContext,
    onDone?: (ok: boolean, unexpected?: unknown) => void,
  ): Promise<CallToolResult> {
    const t = this.byName.get(name)!;
    const args = Value.Default(t.input, structuredClone(rawArgs ?? {}));
    if (!Value.Check(t.input, args)) {
      const first = [...Value.Errors(t.input, args)].slice(0, 3);
      const why = first.map((e) => `${e.instancePath || '(arguments)'} ${e.message}`).join('; ');
      onDone?.(false);
      return {
        isError: true,
        content: [
          {
            type: 'text',
            text: `INVALID_ARGUMENTS: ${why}.\nNext: call ${name} with arguments matching its input schema (tools/list shows it).`,
          },
        ],
      };
    }
    try {
      // A read-only connection: whatever the tool reaches (a view, a function) cannot write.
      const run = () => t.run(args as Record<string, unknown>, ctx);
      const out = await (this.readOnly ? readOnlyDatabase(run) : run());
      onDone?.(true);
      return { content: [{ type: 'text', text: typeof out === 'string' ? out : JSON.stringify(out) }] };
    } catch (err) {
      onDone?.(false, err instanceof AppError ? undefined : err);
      return { isError: true, content: [{ type: 'text', text: errorText(err, (n) => this.has(n)) }] };
    }
  }
}
