import { Type } from 'typebox';
import { tool } from '../types.js';
import { table, truncate } from '../format.js';

/** Docs for agents: the same pages as GET /api/docs/{docType} (AgentDocs). */
export const docsTools = [
  tool<{ docType: string }>({
    name: 'fetch-docs',
    description:
      'Read Plinth documentation as Markdown. Start with docType "instructions" (how this backend works, keys, first steps). ' +
      'Other pages: database, auth, storage, functions, ai, realtime, clients, errors, mcp; InsForge names (db-sdk, auth-sdk, ...) work too. ' +
      'Call list-docs for every page.',
    input: Type.Object({
      docType: Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'Page name, e.g. "instructions" or "database"',
      }),
    }),
    readOnly: true,
    run: async ({ docType }, ctx) => ctx.services.docs.page(docType, ctx.baseUrl),
  }),
  tool<Record<string, never>>({
    name: 'list-docs',
    description:
      'List the documentation pages this server has (name, title, size in characters), to pick one for fetch-docs.',
    input: Type.Object({}),
    readOnly: true,
    run: async (_a, ctx) => table(ctx.services.docs.list()),
  }),
  tool<{ query: string; limit: number }>({
    name: 'search-docs',
    description:
      'Search all documentation pages by section (pages are cut at their headings) and answer the matching sections whole, best first: ' +
      'cheaper than reading a page of 70 KB with fetch-docs. E.g. query "row level security policy", "presigned upload", "cron schedule".',
    input: Type.Object({
      query: Type.String({ minLength: 2, maxLength: 200, description: 'Words to find (every word should appear)' }),
      limit: Type.Integer({ minimum: 1, maximum: 10, default: 3, description: 'Sections to answer' }),
    }),
    readOnly: true,
    run: async ({ query, limit }, ctx) => {
      const hits = ctx.services.docs.search(query, limit, ctx.baseUrl);
      if (!hits.length) return `No section matches "${query}". Try other words, or list-docs for the pages.`;
      return truncate(
        hits
          .map((h) => `## ${h.heading}\n(page: ${h.page}; fetch-docs docType "${h.page}" for all of it)\n\n${h.text}`)
          .join('\n\n---\n\n'),
      );
    },
  }),
];
