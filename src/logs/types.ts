/** How bad a line is, lowest first. */
export const LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LEVELS)[number];

/**
 * The sources Plinth itself writes; other areas may add their own name (lower-case letters,
 * digits, `-` and `_`, up to 32) through `LogWriter.write`.
 */
export const KNOWN_SOURCES = [
  'api',
  'auth',
  'functions',
  'realtime',
  'postgres',
  'schedules',
  'webhooks',
  'email',
  'jobs',
] as const;
export const SOURCE_NAME = /^[a-z][a-z0-9_-]{0,31}$/;

/** The source names `@insforge/mcp` asks for (get-container-logs), as Plinth's own. */
export const INSFORGE_SOURCES: Record<string, string> = {
  'insforge.logs': 'api',
  'postgREST.logs': 'api',
  'postgres.logs': 'postgres',
  'function.logs': 'functions',
};

/** One structured line, as every source writes it. */
export interface LogRecord {
  time: number;
  source: string;
  level: LogLevel;
  message: string;
  fields: Record<string, unknown>;
}

/**
 * A line waiting in the buffer: the record, or a function that builds it when its batch is
 * written (off the request's path: the request only appends the function; issue #38).
 */
export type PendingLine = LogRecord | (() => LogRecord);

/**
 * What other areas call to log: never waits, never throws. Lines are batched into the store
 * off the caller's path; a full buffer drops its oldest lines.
 */
export interface LogWriter {
  write(source: string, level: LogLevel, message: string, fields?: Record<string, unknown>): void;
}

/** A writer that keeps nothing (tests, tools). */
export const NO_LOGS: LogWriter = { write() {} };

/** A line as the API answers it: InsForge's shape (`eventMessage`, `body`), plus `level`. */
export interface LogEntry {
  id: string;
  timestamp: string;
  source: string;
  level: string;
  eventMessage: string;
  body: Record<string, unknown>;
}

export interface LogPage {
  logs: LogEntry[];
  /** Lines matching the filters (all pages). */
  total: number;
  /** Pass as `cursor` for the next (older) page; null on the last one. */
  nextCursor: string | null;
}

/** Filters of a read; all optional. `level` is the lowest level shown. */
export interface LogFilter {
  sources?: string[];
  from?: string;
  to?: string;
  level?: LogLevel;
  q?: string;
  limit?: number;
  cursor?: string;
}
