import type { Queryable } from '../db/types.js';

export type Severity = 'critical' | 'warning' | 'info';
export type Category = 'security' | 'performance' | 'health';

/** One problem found: what, where, why it matters and the SQL that fixes it. */
export interface Finding {
  /** Stable across scans: `<rule>:<object>`; suppressions name it. */
  key: string;
  rule: string;
  category: Category;
  severity: Severity;
  object: { type: string; name: string };
  title: string;
  why: string;
  /** SQL that removes the problem (review it first), or null when the fix is outside the database. */
  fixSql: string | null;
}

/** Thresholds of the rules that read statistics and sessions. */
export interface AdvisorThresholds {
  longQuerySeconds: number;
  idleInTransactionSeconds: number;
  seqScanMin: number;
  seqScanTableRows: number;
  cacheHitRatioMin: number;
  cacheReadsMin: number;
  deadTupleMin: number;
  deadTupleRatio: number;
  staleModifiedMin: number;
  sequenceUsedRatio: number;
  unusedIndexTableReads: number;
}

export const DEFAULT_THRESHOLDS: AdvisorThresholds = {
  longQuerySeconds: 300,
  idleInTransactionSeconds: 60,
  seqScanMin: 1000,
  seqScanTableRows: 10_000,
  cacheHitRatioMin: 0.95,
  cacheReadsMin: 10_000,
  deadTupleMin: 1000,
  deadTupleRatio: 0.2,
  staleModifiedMin: 1000,
  sequenceUsedRatio: 0.8,
  unusedIndexTableReads: 100,
};

/** What a rule reads from: the database (Plinth's own connection) and the thresholds. */
export interface RuleContext {
  db: Queryable;
  thresholds: AdvisorThresholds;
  /** Code that calls URLs: functions now, schedules once they exist (src/advisor/urls.ts). */
  urlSources: UrlSource[];
}

/** Something whose text may call a URL: each item is checked for private addresses. */
export interface UrlSource {
  kind: string;
  list(): Promise<Array<{ name: string; text: string }>>;
}

export interface Rule {
  id: string;
  category: Category;
  run(ctx: RuleContext): Promise<Finding[]>;
}

/** A finding of `rule` about one object. */
export function finding(rule: Rule, f: Omit<Finding, 'key' | 'rule' | 'category'>): Finding {
  return { key: `${rule.id}:${f.object.name}`, rule: rule.id, category: rule.category, ...f };
}

/** A quoted, schema-qualified name for fix SQL; identifiers come from the catalogs. */
export const q = (name: string) => `"${name.replace(/"/g, '""')}"`;
export const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;
