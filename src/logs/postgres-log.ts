import type { LogLevel, LogWriter } from './types.js';

// One line of the embedded server's stderr (log_line_prefix '%m [%p] '):
// "2026-01-31 12:00:00.123 UTC [4242] ERROR:  relation "x" does not exist".
const LINE = /^\S+ \S+ \S+ \[(\d+)\] (DEBUG\d?|LOG|INFO|NOTICE|WARNING|ERROR|FATAL|PANIC):\s+(.*)$/;
const DURATION = /^duration: ([\d.]+) ms\s+(?:statement|execute [^:]*|parse [^:]*|bind [^:]*): ([\s\S]*)$/;
const LEVEL: Record<string, LogLevel> = {
  LOG: 'info',
  INFO: 'info',
  NOTICE: 'info',
  WARNING: 'warn',
  ERROR: 'error',
  FATAL: 'error',
  PANIC: 'error',
};

/**
 * Turns the embedded Postgres server's own log lines into records of source `postgres`:
 * errors, warnings, slow statements (`duration: …`) and the server's lifecycle lines.
 * Continuation lines (DETAIL, STATEMENT, CONTEXT, HINT) are skipped: they can quote row
 * values (a duplicate key's value) and the text of admin SQL.
 */
export function postgresLogSink(logs: LogWriter): (line: string) => void {
  return (line) => {
    const m = LINE.exec(line);
    if (!m) return;
    const [, pid, severity, text] = m as unknown as [string, string, string, string];
    if (severity.startsWith('DEBUG')) return;
    const d = DURATION.exec(text);
    if (d) {
      logs.write('postgres', 'warn', `slow statement: ${d[1]} ms`, {
        pid: Number(pid),
        durationMs: Number(d[1]),
        statement: d[2]!.slice(0, 2000),
      });
      return;
    }
    logs.write('postgres', LEVEL[severity] ?? 'info', text, { pid: Number(pid), severity });
  };
}
