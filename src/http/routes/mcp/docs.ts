import { Type } from '@fastify/type-provider-typebox';
import type { RoutePlugin } from '../../types.js';
import { publicOrigin } from '../../origin.js';
import type { OpenApi } from '../../../mcp/docs.js';

const Content = Type.Object({ content: Type.String({ description: 'Markdown' }) });
const Name = Type.String({ pattern: '^[a-z0-9-]{1,64}$' });
const open = { access: 'open' as const };
const tags = ['mcp'];

/**
 * The docs for agents, served by the instance with its own base URL in the examples: /llms.txt,
 * /llms-full.txt, and /api/docs (the paths InsForge's MCP server reads: {content} in Markdown).
 * Public: they hold nothing the repository's docs do not.
 */
export const docsRoutes: RoutePlugin<'agentDocs' | 'config'> = async (app, { deps }) => {
  const docs = deps.agentDocs;
  const base = (request: Parameters<typeof publicOrigin>[0]) => publicOrigin(request, deps.config.publicUrl);
  const openapi = () => app.swagger() as OpenApi;

  app.get(
    '/llms.txt',
    { config: open, schema: { tags, summary: 'What this backend is and its docs, for language models (llmstxt.org)' } },
    async (request, reply) => reply.type('text/markdown; charset=utf-8').send(docs.llmsTxt(base(request))),
  );
  app.get(
    '/llms-full.txt',
    { config: open, schema: { tags, summary: 'Every doc page in one text' } },
    async (request, reply) => reply.type('text/markdown; charset=utf-8').send(docs.llmsFullTxt(base(request))),
  );
  app.get(
    '/api/docs',
    {
      config: open,
      schema: {
        tags,
        summary: 'The doc pages (name, title, size)',
        response: {
          200: Type.Object({
            docs: Type.Array(Type.Object({ name: Type.String(), title: Type.String(), chars: Type.Integer() })),
          }),
        },
      },
    },
    async () => ({ docs: docs.list() }),
  );
  app.get(
    '/api/docs/:docType',
    {
      config: open,
      schema: {
        tags,
        summary: 'One page as Markdown: a name from GET /api/docs, or an InsForge doc type (instructions, db-sdk, ...)',
        params: Type.Object({ docType: Name }),
        response: { 200: Content },
      },
    },
    async (request) => ({ content: docs.page(request.params.docType, base(request)) }),
  );
  app.get(
    '/api/docs/:feature/:language',
    {
      config: open,
      schema: {
        tags,
        summary:
          'SDK docs of a feature (db, storage, functions, auth, ai, realtime) in a language (typescript, rest-api)',
        params: Type.Object({ feature: Name, language: Name }),
        response: { 200: Content },
      },
    },
    async (request) => ({ content: docs.sdk(request.params.feature, request.params.language, base(request), openapi) }),
  );
};
