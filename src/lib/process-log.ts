/** Where the process's own log lines go: stdout (main.ts hands in its non-blocking destination). */
export interface LineSink {
  write(line: string): unknown;
}

const LEVELS: Record<string, number> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: Number.POSITIVE_INFINITY,
};

/**
 * A writer of log lines in pino's JSON shape (`level`, `time`, `msg`, fields) to `sink`, for
 * background work that has no request logger: lines below LOG_LEVEL (`minLevel`) are dropped.
 */
export function processLog(minLevel: string, sink: LineSink = process.stdout) {
  const min = LEVELS[minLevel] ?? 30;
  return (level: 'info' | 'warn' | 'error', msg: string, fields: Record<string, unknown> = {}): void => {
    const n = LEVELS[level]!;
    if (n < min) return;
    sink.write(`${JSON.stringify({ level: n, time: Date.now(), msg, ...fields })}\n`);
  };
}
