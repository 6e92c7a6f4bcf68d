import { Type } from 'typebox';
import { tool } from '../types.js';
import { table } from '../format.js';
import { NAME_PATTERN, VERSION_PATTERN } from '../../database/migrations/service.js';

const Version = Type.String({
  pattern: VERSION_PATTERN,
  description: 'digits, e.g. 20260101120000; applied in numeric order',
});
const Name = Type.String({ pattern: NAME_PATTERN, description: 'letters, digits, _ and -, e.g. create_notes' });
const Sql = Type.String({
  minLength: 1,
  maxLength: 1_000_000,
  description: 'The migration script: one or more statements, no begin/commit',
});

/** The app's versioned migrations: the migrations service of /api/database/migrations. */
export const migrationTools = [
  tool<Record<string, never>>({
    name: 'list-migrations',
    description: 'The applied migrations (version, name, checksum, statements, appliedAt), in version order.',
    input: Type.Object({}),
    readOnly: true,
    run: async (_a, ctx) => table(await ctx.services.migrations.list()),
  }),
  tool<{ sql: string; version?: string }>({
    name: 'dry-run-migration',
    description:
      'Parse a migration script without running it and say how risky it is (SAFE, WARNING, DANGER, with reasons per statement); with version, whether it is pending, applied or drifted. ' +
      'Call it before apply-migration.',
    input: Type.Object({ sql: Sql, version: Type.Optional(Version) }),
    readOnly: true,
    run: async ({ sql, version }, ctx) => {
      const r = await ctx.services.migrations.dryRun(sql, version ?? null);
      const head = `risk ${r.riskLevel}${r.reasons.length ? `: ${r.reasons.join('; ')}` : ''}${r.status ? `\nversion ${r.version}: ${r.status}` : ''}`;
      return `${head}\n${table(r.statements.map((s) => ({ kind: s.kind, risk: s.riskLevel, reasons: s.reasons.join('; '), sql: s.sql })))}`;
    },
  }),
  tool<{ version: string; name: string; sql: string }>({
    name: 'apply-migration',
    description:
      'Apply one migration in one transaction as the owner role and record it (same as POST /api/database/migrations): all its statements or none. ' +
      'A version already applied is refused (409); use a new, higher version for each change.',
    input: Type.Object({ version: Version, name: Name, sql: Sql }),
    readOnly: false,
    destructive: true,
    run: async (a, ctx) => {
      const m = await ctx.services.migrations.apply(a);
      return `Migration ${m.version} (${m.name}) applied: ${m.statements} statement(s), checksum ${m.checksum}`;
    },
  }),
];
