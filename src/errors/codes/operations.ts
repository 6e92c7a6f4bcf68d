import type { ErrorSpec } from '../spec.js';

/** Operating the server: logs, metrics, MCP, backups. */
export const OPERATIONS_ERRORS = {
  // logs and metrics
  INVALID_LOG_QUERY: {
    status: 400,
    message: 'The log query is not valid.',
    nextActions:
      'Fix the parameter the message names: from and to are ISO 8601 times (from before to), level one of debug, info, warn, error, limit 1-1000, cursor as the last page returned it.',
  },
  LOG_SOURCE_NOT_FOUND: {
    status: 404,
    message: 'No such log source.',
    nextActions: 'Use a source listed by GET /api/logs/sources (api, auth, functions, realtime, postgres, …).',
  },
  METRICS_UNAUTHORIZED: {
    status: 401,
    message: 'The metrics need the admin API key or the metrics token.',
    nextActions:
      'Send "Authorization: Bearer <METRICS_TOKEN>" (Prometheus: authorization.credentials) or the admin key in x-api-key.',
  },
  INVALID_BULK_FILE: {
    status: 400,
    message: 'The bulk-upsert file is not valid.',
    nextActions:
      'Send multipart/form-data with "table", an optional "upsertKey" and "file": a .csv file with a header line or a .json array of objects.',
  },
  // mcp (the MCP server and the docs for agents)
  MCP_SESSION_NOT_FOUND: {
    status: 404,
    message: 'No such MCP session: it ended or this server was restarted.',
    nextActions: 'Start a new session: send an initialize request without the Mcp-Session-Id header.',
  },
  MCP_TOO_MANY_SESSIONS: {
    status: 503,
    message: 'Too many MCP sessions are open on this server.',
    nextActions:
      'Close sessions you no longer use (DELETE /api/mcp with their Mcp-Session-Id) or wait for idle ones to expire, then try again.',
  },
  DOC_NOT_FOUND: {
    status: 404,
    message: 'No such document.',
    nextActions: 'GET /api/docs lists the documents this server has.',
  },
  NOT_SUPPORTED: {
    status: 501,
    message: 'Plinth does not do this.',
    nextActions: 'See GET /api/docs/instructions for what this server offers.',
  },
  // backups kept on the server (/api/admin/backups)
  BACKUP_RUNNING: {
    status: 409,
    message: 'A backup is being made.',
    nextActions: 'Wait until GET /api/admin/backups shows it ready (or failed), then try again.',
  },
  BACKUP_NOT_FOUND: {
    status: 404,
    message: 'No such backup on this server.',
    nextActions: 'GET /api/admin/backups lists the backups kept on the server.',
  },
} as const satisfies Record<string, ErrorSpec>;
