import { Type } from 'typebox';
import { tool } from '../types.js';
import { truncate } from '../format.js';
import type { Issue } from '../../advisor/service.js';

const Category = Type.Union([Type.Literal('security'), Type.Literal('performance'), Type.Literal('health')]);

/** Findings as short blocks: what, why, the SQL that fixes it, the key to suppress it. */
function findings(issues: Issue[]): string {
  if (!issues.length) return 'No findings: nothing to fix.';
  const blocks = issues.map(
    (i) =>
      `- [${i.severity}] ${i.category}/${i.rule} on ${i.object.type} ${i.object.name}: ${i.title}\n  why: ${i.why}${i.fixSql ? `\n  fix: ${i.fixSql}` : ''}${i.suppressed ? '\n  (suppressed)' : ''}\n  key: ${i.key}`,
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
    description:
      'The findings of the last advisor scan (same as GET /api/advisor/issues), most severe first, optionally of one category.',
    input: Type.Object({ category: Type.Optional(Category), includeSuppressed: Type.Boolean({ default: false }) }),
    readOnly: true,
    run: async ({ category, includeSuppressed }, ctx) => {
      const issues = await ctx.services.advisor.issues(includeSuppressed);
      return findings(category ? issues.filter((i) => i.category === category) : issues);
    },
  }),
  tool<{ key: string; reason: string }>({
    name: 'dismiss-advisor-issue',
    description:
      'Dismiss (suppress) one advisor finding by its key (the "key:" line of a finding, <rule>:<object>), with the reason: ' +
      'it leaves the default list of later scans (get-advisor-issues with includeSuppressed shows it). Same as POST /api/advisor/suppressions. ' +
      'Only for a finding that is intended (e.g. a bucket public on purpose); fix the others.',
    input: Type.Object({
      key: Type.String({ minLength: 3, maxLength: 500, description: 'The finding key, e.g. "public_bucket:assets"' }),
      reason: Type.String({ minLength: 1, maxLength: 1000, description: 'Why it is not a problem here' }),
    }),
    readOnly: false,
    run: async ({ key, reason }, ctx) => {
      await ctx.services.advisor.suppress(key, reason);
      return `Dismissed ${key}: later scans leave it out (restore-advisor-issue reports it again).`;
    },
  }),
  tool<{ key: string }>({
    name: 'restore-advisor-issue',
    description: 'Report a dismissed advisor finding again (same as DELETE /api/advisor/suppressions/{key}).',
    input: Type.Object({ key: Type.String({ minLength: 3, maxLength: 500 }) }),
    readOnly: false,
    run: async ({ key }, ctx) => {
      await ctx.services.advisor.unsuppress(key);
      return `Restored ${key}: scans report it again while it is found.`;
    },
  }),
];
