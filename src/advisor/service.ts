import { AppError } from '../errors/index.js';
import type { Db } from '../db/types.js';
import { SECURITY_RULES } from './security.js';
import { PERFORMANCE_RULES } from './performance.js';
import { HEALTH_RULES } from './health.js';
import { DEFAULT_THRESHOLDS, type AdvisorThresholds, type Finding, type Rule, type UrlSource } from './types.js';

export const RULES: Rule[] = [...SECURITY_RULES, ...PERFORMANCE_RULES, ...HEALTH_RULES];

export interface Issue extends Finding {
  suppressed: boolean;
  firstSeen: string;
  lastSeen: string;
}

const ISSUES_SQL = `select i.key, i.rule, i.category, i.severity, json_build_object('type', i.object_type, 'name', i.object_name) as object,
    i.title, i.why, i.fix_sql as "fixSql", s.key is not null as suppressed,
    to_char(i.first_seen at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "firstSeen",
    to_char(i.last_seen at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "lastSeen"
  from system.advisor_issues i left join system.advisor_suppressions s on s.key = i.key
  order by case i.severity when 'critical' then 0 when 'warning' then 1 else 2 end, i.category, i.key`;

/**
 * The advisor: runs every rule on the database (Plinth's own connection: it reads every
 * session and statistic), keeps the findings of the last scan, and the suppressions.
 * More code that calls URLs (schedules) joins through `urlSources`.
 */
export class AdvisorService {
  constructor(
    private readonly db: Db,
    private readonly urlSources: UrlSource[] = [],
    private readonly thresholds: AdvisorThresholds = DEFAULT_THRESHOLDS,
  ) {}

  /** Runs every rule; the findings replace the last scan's (first_seen kept for those still there). */
  async scan(): Promise<{ scannedAt: string; rules: number; issues: Issue[] }> {
    const ctx = { db: this.db, thresholds: this.thresholds, urlSources: this.urlSources };
    const found = (await Promise.all(RULES.map((r) => r.run(ctx)))).flat();
    await this.db.transaction(async (tx) => {
      await tx.query('select pg_advisory_xact_lock(7133)');
      await tx.query('delete from system.advisor_issues where not (key = any ($1::text[]))', [found.map((f) => f.key)]);
      for (const f of found) {
        await tx.query(
          `insert into system.advisor_issues (key, rule, category, severity, object_type, object_name, title, why, fix_sql)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
           on conflict (key) do update set severity = excluded.severity, title = excluded.title, why = excluded.why, fix_sql = excluded.fix_sql, last_seen = now()`,
          [f.key, f.rule, f.category, f.severity, f.object.type, f.object.name, f.title, f.why, f.fixSql],
        );
      }
    });
    return { scannedAt: new Date().toISOString(), rules: RULES.length, issues: await this.issues(true) };
  }

  /** The findings of the last scan, suppressed ones only when asked for. */
  async issues(includeSuppressed = false): Promise<Issue[]> {
    const { rows } = await this.db.query<Issue>(ISSUES_SQL);
    return includeSuppressed ? rows : rows.filter((r) => !r.suppressed);
  }

  async suppressions(): Promise<Array<{ key: string; reason: string; createdAt: string }>> {
    const { rows } = await this.db.query<{ key: string; reason: string; createdAt: string }>(
      `select key, reason, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "createdAt" from system.advisor_suppressions order by key`,
    );
    return rows;
  }

  /** Silences one finding by its key (it may not exist yet: a rule id and object name). */
  async suppress(key: string, reason: string): Promise<void> {
    if (!RULES.some((r) => key.startsWith(`${r.id}:`))) {
      throw new AppError('INVALID_INPUT', {
        message: `"${key.slice(0, 100)}" is not a finding key (<rule>:<object>).`,
        nextActions: 'Copy the key of a finding from GET /api/advisor/issues.',
      });
    }
    await this.db.query(
      `insert into system.advisor_suppressions (key, reason) values ($1, $2) on conflict (key) do update set reason = excluded.reason`,
      [key, reason],
    );
  }

  async unsuppress(key: string): Promise<void> {
    const r = await this.db.query('delete from system.advisor_suppressions where key = $1', [key]);
    if (!r.rowCount)
      throw new AppError('NOT_FOUND', {
        message: `No suppression "${key.slice(0, 100)}".`,
        nextActions: 'GET /api/advisor/suppressions lists them.',
      });
  }
}
