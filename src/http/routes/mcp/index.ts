import { Type } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { effectiveConfig } from '../../../config/running.js';
import type { RoutePlugin } from '../../types.js';
import { AppError } from '../../../errors/index.js';
import { publicOrigin } from '../../origin.js';
import type { McpSessions, SessionOptions } from '../../../mcp/sessions.js';

const READONLY = /^(1|true|yes)$/i;
const tags = ['mcp'];

/** The admin key and nothing else reaches a tool: any other caller is a 401, before the MCP layer sees the request. */
function assertAdmin(request: FastifyRequest): void {
  if (request.identity.kind === 'admin') return;
  throw new AppError('UNAUTHORIZED', {
    message: 'The MCP server is for the admin key only.',
    nextActions: 'Send "Authorization: Bearer <admin API key>" (docs/mcp.md shows client configurations).',
  });
}

/**
 * The MCP server at /api/mcp (Streamable HTTP: POST messages, GET the server's stream, DELETE
 * ends the session), with the tools of src/mcp/, and POST /api/usage/mcp where InsForge's MCP
 * server reports its tool calls.
 */
export const mcpRoutes: RoutePlugin = async (app, { deps }) => {
  const options: SessionOptions = {
    services: {
      ...deps,
      anonKey: deps.credentials.anonKey,
      docs: deps.agentDocs,
      usage: deps.mcpUsage,
      effectiveConfig: () => effectiveConfig(deps),
    },
    version: deps.version,
    maxSessions: deps.config.mcp.maxSessions,
    idleMs: deps.config.mcp.sessionIdleSeconds * 1000,
    onToolError: (tool, err) => app.log.error({ err, tool }, 'MCP tool failed'),
  };
  // The MCP SDK and the tools are imported on the first MCP request: a start does not load them (issue #38).
  let opened: Promise<McpSessions> | null = null;
  const sessions = () => {
    opened ??= import('../../../mcp/sessions.js')
      .then(({ McpSessions }) => new McpSessions(options))
      .catch((err) => {
        opened = null;
        throw err;
      });
    return opened;
  };
  // preClose: an open event stream (GET /api/mcp) would otherwise keep the server from closing.
  app.addHook('preClose', async () => {
    await opened?.then(
      (s) => s.close(),
      () => {},
    );
  });

  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    assertAdmin(request);
    const q = request.query as { readonly?: string };
    const readOnly = READONLY.test(q.readonly ?? '') || READONLY.test(String(request.headers['x-mcp-readonly'] ?? ''));
    const sessionId = request.headers['mcp-session-id'];
    const handler = await (await sessions()).handlerFor(
      typeof sessionId === 'string' ? sessionId : undefined,
      request.body,
      {
        readOnly,
        baseUrl: publicOrigin(request, deps.config.publicUrl),
      },
    );
    // From here the SDK's transport writes the answer (JSON, or the event stream of GET); the
    // headers set so far (CORS, X-Request-Id) go on the raw response, which hijack bypasses.
    for (const [name, value] of Object.entries(reply.getHeaders()))
      if (value !== undefined) reply.raw.setHeader(name, value as string | string[]);
    reply.hijack();
    await handler(request.raw, reply.raw, request.body);
  };
  const schema = {
    tags,
    summary: 'The MCP server (Streamable HTTP), admin key only; ?readonly=1 offers only tools that change nothing',
    querystring: Type.Object({ readonly: Type.Optional(Type.String({ maxLength: 8 })) }),
  };
  const config = { access: 'public' as const, rateLimit: false as const };
  // Admin only, and tools take files as text (bulk-upsert up to 20 MiB, function code 1 MiB).
  app.post('/api/mcp', { config, schema, bodyLimit: 25 * 1024 * 1024 }, handle);
  app.get('/api/mcp', { config, schema: { ...schema, summary: "The MCP server's event stream of a session" } }, handle);
  app.delete('/api/mcp', { config, schema: { ...schema, summary: 'End an MCP session' } }, handle);

  app.post(
    '/api/usage/mcp',
    {
      config: { access: 'admin' },
      schema: {
        tags,
        summary: "Record one MCP tool call (InsForge's MCP server reports each call here)",
        body: Type.Object({
          tool_name: Type.String({ minLength: 1, maxLength: 100 }),
          success: Type.Boolean({ default: true }),
          timestamp: Type.Optional(Type.String({ maxLength: 64 })),
        }),
        response: { 200: Type.Object({ success: Type.Boolean() }) },
      },
    },
    async (request) => {
      deps.mcpUsage.record(request.body.tool_name, request.body.success, 'client');
      return { success: true };
    },
  );

  app.get(
    '/api/usage/mcp',
    {
      config: { access: 'admin' },
      schema: {
        tags,
        summary: 'MCP tool calls of the last 30 days per tool and source',
        response: {
          200: Type.Object({
            tools: Type.Array(
              Type.Object({
                tool: Type.String(),
                source: Type.String(),
                calls: Type.Integer(),
                failures: Type.Integer(),
              }),
            ),
          }),
        },
      },
    },
    async () => ({ tools: await deps.mcpUsage.summary() }),
  );

  // InsForge's MCP server has deployment tools (create-deployment); Plinth hosts no sites.
  const noDeployments = async () => {
    throw new AppError('NOT_SUPPORTED', {
      message: 'Plinth does not host site deployments.',
      nextActions:
        'Deploy the frontend to a static host (Netlify, Vercel, Cloudflare Pages, any web server) and point it at this backend; fetch-docs "deployment" says more.',
    });
  };
  app.all('/api/deployments', { config: { access: 'admin' }, schema: { hide: true } }, noDeployments);
  app.all('/api/deployments/*', { config: { access: 'admin' }, schema: { hide: true } }, noDeployments);
};
