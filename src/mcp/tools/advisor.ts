import { Type } from 'typebox';
import { tool } from '../types.js';
import { truncate } from '../format.js';
import type { Issue } from '../../advisor/service.js';

const Category = Type.Union([Type.Literal('security'), Type.Literal('performance'), Type.Literal('health')]);

/** Findings as short blocks: what, why, the SQL that fixes it, the key to suppress it. */
function findings(issues: Issue[]): string {
  if (!issues.length) return 'No findings: nothing to fix.';
  const blocks = issues.map(
    (i) => `- [${i.severity}] ${i.category}/${i.rule} on ${i.object.type} ${i.object.name}: ${i.title}\n  why: ${i.why}${i.fixSql ? `\n  fix: ${i.fixSql}` : ''}${i.suppressed ? '\n  (suppressed)' : ''}\n  key: ${i.key}`,
  );
  return truncate(`${issues.length} finding(s), most severe first:\n${blocks.join('\n')}`);
}

/** The security and performance advisor: the advisor service of /api/advisor/*. */
export const advisorTools = [
  tool<Record<string, never>>({
    name: 'run-advisor-scan',
    description:
      'Run every advisor rule now (security: tables without RLS, permissive policies, private URLs; performance: missing indexes on foreign keys…; health) and answer the findings, each with the SQL that fixes it. ' +
      'Fix them (run-raw-sql or a migration), then scan again to see them gone.',
    input: Type.Object({}),
    readOnly: false,
    run: async (_a, ctx) => {
      const r = await ctx.services.advisor.scan();
      const open = r.issues.filter((i) => !i.suppressed);
      const hidden = r.issues.length - open.length;
      return `scanned ${r.rules} rules at ${r.scannedAt}${hidden ? ` (${hidden} suppressed finding(s) not shown)` : ''}\n${findings(open)}`;
    },
  }),
  tool<{ category?: 'security' | 'performance' | 'health'; includeSuppressed: boolean }>({
    name: 'get-advisor-issues',
    description: 'The findings of the last advisor scan (same as GET /api/advisor/issues), most severe first, optionally of one category.',
    input: Type.Object({ category: Type.Optional(Category), includeSuppressed: Type.Boolean({ default: false }) }),
    readOnly: true,
    run: async ({ category, includeSuppressed }, ctx) => {
      const issues = await ctx.services.advisor.issues(includeSuppressed);
      return findings(category ? issues.filter((i) => i.category === category) : issues);
    },
  }),
];
