import type { LogRecord } from '../logs/index.js';

/** One invocation as the log and the metrics see it (status null: it failed before an answer). */
export interface Invocation {
  slug: string;
  functionId: string;
  status: number | null;
  cold: boolean;
  seconds: number;
  error: string | null;
}

/** The log store's line of an invocation (source functions), built when its batch is written. */
export function invocationRecord(time: number, ok: boolean, inv: Invocation): LogRecord {
  const { seconds, ...fields } = inv;
  return {
    time,
    source: 'functions',
    level: ok ? 'info' : 'error',
    message: `invoked ${inv.slug}: ${inv.status ?? inv.error}`,
    fields: { ...fields, durationMs: Math.round(seconds * 1e5) / 100 },
  };
}
