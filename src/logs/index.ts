export { LogsService, type LogsOptions } from './service.js';
export { postgresLogSink } from './postgres-log.js';
export { maskUrl } from './mask.js';
export {
  NO_LOGS,
  LEVELS,
  KNOWN_SOURCES,
  type LogWriter,
  type LogLevel,
  type LogFilter,
  type LogPage,
  type LogEntry,
  type LogRecord,
} from './types.js';
export type { RouteMinute } from './store.js';
export type { LineTally, TallySummary } from './tally.js';
