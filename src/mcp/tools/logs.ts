import { Type } from 'typebox';
import { tool } from '../types.js';
import { table } from '../format.js';
import { LEVELS, type LogLevel, type LogPage } from '../../logs/index.js';

const Filters = {
  level: Type.Optional(
    Type.Union(
      LEVELS.map((l) => Type.Literal(l)),
      { description: 'The lowest level shown (warn: warn and error)' },
    ),
  ),
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'Text the message or the fields contain (case-insensitive)',
    }),
  ),
  from: Type.Optional(Type.String({ maxLength: 64, description: 'ISO 8601 time: lines at or after it' })),
  to: Type.Optional(Type.String({ maxLength: 64, description: 'ISO 8601 time: lines at or before it' })),
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
  cursor: Type.Optional(
    Type.String({ maxLength: 64, pattern: '^[A-Za-z0-9_-]+$', description: 'The cursor the previous page ended with' }),
  ),
};
type FilterArgs = { level?: LogLevel; q?: string; from?: string; to?: string; limit: number; cursor?: string };

/** A page of lines as a table, newest first, with the cursor of the next page. */
function page(p: LogPage): string {
  const rows = p.logs.map((l) => ({
    time: l.timestamp,
    source: l.source,
    level: l.level,
    message: l.eventMessage,
    fields: Object.keys(l.body).length ? l.body : null,
  }));
  return `${table(rows)}\n${p.logs.length} of ${p.total} line(s)${p.nextCursor ? `; older lines: cursor=${p.nextCursor}` : ''}`;
}

/** The log store: its sources, one source's lines, a search over all (the logs service of /api/logs/*). */
export const logTools = [
  tool<Record<string, never>>({
    name: 'list-log-sources',
    description:
      'The log sources (api, auth, functions, postgres, schedules, webhooks, …) with their number of lines and the time of the newest.',
    input: Type.Object({}),
    readOnly: true,
    run: async (_a, ctx) => table(await ctx.services.logs.sources()),
  }),
  tool<FilterArgs & { source: string }>({
    name: 'get-container-logs',
    description:
      "One source's log lines, newest first (same as GET /api/logs/{source}). Sources: api, auth, functions, realtime, postgres, schedules, webhooks, email, jobs " +
      '(InsForge names such as insforge.logs, postgres.logs, function.logs work too). Filter by level, text and time; page with cursor.',
    input: Type.Object({ source: Type.String({ minLength: 1, maxLength: 64 }), ...Filters }),
    readOnly: true,
    run: async ({ source, ...filter }, ctx) =>
      page(await ctx.services.logs.read({ ...filter, sources: [await ctx.services.logs.resolveSource(source)] })),
  }),
  tool<FilterArgs & { sources?: string[] }>({
    name: 'search-logs',
    description:
      'Search the lines of every source (or of the sources named), newest first (same as GET /api/logs/search): e.g. level "error" to find what failed, q for a word.',
    input: Type.Object({
      sources: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 20 })),
      ...Filters,
    }),
    readOnly: true,
    run: async ({ sources, ...filter }, ctx) => {
      const resolved = sources ? await Promise.all(sources.map((s) => ctx.services.logs.resolveSource(s))) : undefined;
      return page(await ctx.services.logs.read({ ...filter, sources: resolved }));
    },
  }),
];
