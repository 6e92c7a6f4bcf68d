// An error's nextActions are written for the HTTP API (routes, CLI commands). Over MCP the
// agent has tools, not curl: each route or command it has a tool for is named as that tool.

/** HTTP routes (method and path as the catalogue writes them) and CLI commands → the tool that does the same. */
const TOOL_FOR: Array<[RegExp, string]> = [
  [/GET \/api\/advisor\/issues/g, 'get-advisor-issues'],
  [/POST \/api\/advisor\/scan/g, 'run-advisor-scan'],
  [/POST \/api\/advisor\/suppressions/g, 'dismiss-advisor-issue'],
  [/GET \/api\/advisor\/suppressions/g, 'get-advisor-issues (includeSuppressed true)'],
  [/DELETE \/api\/advisor\/suppressions\/\{key\}/g, 'restore-advisor-issue'],
  [/(POST \/api\/database\/(advance\/rawsql|sql))/g, 'run-raw-sql'],
  [/POST \/api\/database\/advance\/bulk-upsert/g, 'bulk-upsert'],
  [/POST \/api\/database\/migrations\/dry-run/g, 'dry-run-migration'],
  [/GET \/api\/database\/migrations/g, 'list-migrations'],
  [/POST \/api\/database\/migrations/g, 'apply-migration'],
  [/PATCH \/api\/database\/tables\/\{tableName\}\/schema/g, 'run-raw-sql'],
  [/GET \/api\/database\/tables\/\{tableName\}\/schema/g, 'get-table-schema'],
  [/GET \/api\/database\/tables/g, 'list-tables'],
  [/GET \/api\/metadata\/\{table\}/g, 'get-table-schema'],
  [/GET \/api\/metadata/g, 'get-backend-metadata'],
  [/GET \/api\/database\/records\/\{(tableName|table)\}/g, 'select-records'],
  [/(POST|PATCH|DELETE) \/api\/database\/records\/\{(tableName|table)\}/g, 'write-records'],
  [/(GET|POST|PATCH|DELETE) \/api\/db\/\{table\}/g, 'select-records or write-records'],
  [/GET \/api\/database\/webhooks\/\{id\}\/deliveries/g, 'list-webhook-deliveries'],
  [/PATCH \/api\/database\/webhooks\/\{id\}/g, 'update-webhook'],
  [/GET \/api\/database\/webhooks/g, 'list-webhooks'],
  [/POST \/api\/database\/webhooks/g, 'create-webhook'],
  [/GET \/api\/storage\/buckets\/\{bucketName\}\/objects/g, 'list-objects'],
  [/POST \/api\/storage\/buckets/g, 'create-bucket'],
  [/GET \/api\/storage\/buckets/g, 'list-buckets'],
  [/GET \/api\/functions\/\{slug\}\/logs/g, 'get-function-logs'],
  [/PUT \/api\/functions\/\{slug\}/g, 'update-function'],
  [/POST \/api\/functions\/\{slug\}/g, 'invoke-function'],
  [/GET \/api\/functions/g, 'list-functions'],
  [/POST \/api\/functions/g, 'create-function'],
  [/PUT \/api\/secrets\/\{name\}/g, 'set-secret'],
  [/GET \/api\/secrets/g, 'list-secrets'],
  [/GET \/api\/schedules/g, 'list-schedules'],
  [/POST \/api\/schedules/g, 'create-schedule'],
  [/POST \/api\/email\/messages\/\{id\}\/resend/g, 'resend-email'],
  [/GET \/api\/email\/messages/g, 'list-emails'],
  [/POST \/api\/email\/send-raw/g, 'send-email'],
  [/GET \/api\/logs\/search/g, 'search-logs'],
  [/GET \/api\/logs\/sources/g, 'list-log-sources'],
  [/GET \/api\/logs\/\{source\}/g, 'get-container-logs'],
  [/GET \/api\/admin\/config/g, 'get-config'],
  [/GET \/api\/auth\/users/g, 'list-users'],
  [/GET \/api\/docs\/instructions/g, 'fetch-docs (docType "instructions")'],
  [/GET \/api\/docs\/\{docType\}/g, 'fetch-docs'],
  [/GET \/api\/docs(?![\w/])/g, 'list-docs'],
  [/"?npm run plinth -- keys show"?/g, 'get-anon-key'],
];

/**
 * `text` with each route or CLI command the session has a tool for replaced by "the tool
 * <name>"; `has` tells which tools the session offers (a read-only one has fewer).
 */
export function forMcp(text: string, has: (tool: string) => boolean): string {
  let out = text;
  for (const [pattern, tool] of TOOL_FOR) {
    const first = tool.split(' ')[0]!;
    if (has(first)) out = out.replace(pattern, `the tool ${tool}`);
  }
  return out;
}
