import { Type } from 'typebox';
import { tool } from '../types.js';
import { table } from '../format.js';

/** Docs for agents: the same pages as GET /api/docs/{docType} (AgentDocs). */
export const docsTools = [
  tool<{ docType: string }>({
    name: 'fetch-docs',
    description:
      'Read Plinth documentation as Markdown. Start with docType "instructions" (how this backend works, keys, first steps). ' +
      'Other pages: database, auth, storage, functions, ai, realtime, clients, errors, mcp; InsForge names (db-sdk, auth-sdk, ...) work too. ' +
      'Call list-docs for every page.',
    input: Type.Object({ docType: Type.String({ minLength: 1, maxLength: 64, description: 'Page name, e.g. "instructions" or "database"' }) }),
    readOnly: true,
    run: async ({ docType }, ctx) => ctx.services.docs.page(docType, ctx.baseUrl),
  }),
  tool<Record<string, never>>({
    name: 'list-docs',
    description: 'List the documentation pages this server has (name, title, size in characters), to pick one for fetch-docs.',
    input: Type.Object({}),
    readOnly: true,
    run: async (_a, ctx) => table(ctx.services.docs.list()),
  }),
];
