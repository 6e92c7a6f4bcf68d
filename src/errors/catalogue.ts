/**
 * The one catalogue of error codes. A throw site names a code; the status, default message
 * and next action come from here. `docs/errors.md` is generated from this table
 * (`npm run docs:errors`) and a test keeps the two in step.
 */
export interface ErrorSpec {
  status: number;
  message: string;
  nextActions: string;
}

export const ERRORS = {
  // generic request errors
  INVALID_INPUT: { status: 400, message: 'The request is not valid.', nextActions: 'Fix the request as the message says and send it again.' },
  MALFORMED_REQUEST: { status: 400, message: 'The request is not valid HTTP.', nextActions: 'Fix the request line, headers or body framing and send it again.' },
  URI_TOO_LONG: { status: 414, message: 'A path segment of the URL is too long.', nextActions: 'Use a shorter name or key.' },
  HEADERS_TOO_LARGE: { status: 431, message: 'The request headers are too large.', nextActions: 'Send fewer or smaller headers (cookies, tokens).' },
  INVALID_JSON: { status: 400, message: 'The request body is not valid JSON.', nextActions: 'Send a well-formed JSON body.' },
  UNAUTHORIZED: { status: 401, message: 'A valid credential is required.', nextActions: 'Send an access token as "Authorization: Bearer <token>", or an API key.' },
  INVALID_TOKEN: { status: 401, message: 'The access token is invalid.', nextActions: 'Send the access token exactly as sign-in returned it, or sign in again.' },
  AUTH_UNAUTHORIZED: { status: 401, message: 'The access token has expired or its session has ended.', nextActions: 'Refresh the session with POST /api/auth/refresh (the InsForge SDK does this by itself), or sign in again.' },
  INVALID_API_KEY: { status: 401, message: 'The API key is not valid.', nextActions: 'Check the key; an admin can show the anon key with "npm run plinth -- keys show".' },
  FORBIDDEN: { status: 403, message: 'You are not allowed to do this.', nextActions: 'Use a credential that has access, such as the admin API key for admin endpoints.' },
  NOT_FOUND: { status: 404, message: 'Not found.', nextActions: 'Check the path; the API is described at GET /api/openapi.json.' },
  ROUTE_NOT_FOUND: { status: 404, message: 'No such endpoint.', nextActions: 'Check the method and path; the API is described at GET /api/openapi.json.' },
  ALREADY_EXISTS: { status: 409, message: 'It already exists.', nextActions: 'Use another name, or update the existing resource.' },
  CONFLICT: { status: 409, message: 'The request conflicts with the current state.', nextActions: 'Reload the resource and try again.' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is too large.', nextActions: 'Send a smaller body.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'The content type is not supported.', nextActions: 'Send "Content-Type: application/json" (or multipart/form-data for uploads).' },
  EXPECTATION_FAILED: { status: 417, message: 'The Expect header is not supported.', nextActions: 'Send no Expect header, or "Expect: 100-continue".' },
  RATE_LIMITED: { status: 429, message: 'Too many requests.', nextActions: 'Wait for the number of seconds in the Retry-After header, then try again.' },
  INTERNAL_ERROR: { status: 500, message: 'Something went wrong on the server.', nextActions: 'Try again; if it keeps happening, report the X-Request-Id of this response to the operator.' },
  BACKUP_UNAVAILABLE: { status: 501, message: 'This server cannot back up its database itself.', nextActions: 'Use pg_dump for a Postgres server at DATABASE_URL and the provider\'s tools for S3 (README, Backups).' },
  DASHBOARD_NOT_BUILT: { status: 503, message: 'The dashboard is not built on this server.', nextActions: 'Run `npm run build` in the Plinth folder (npm install runs it too), then reload /dashboard.' },
  SERVICE_UNAVAILABLE: { status: 503, message: 'A service this endpoint needs is unavailable.', nextActions: 'Try again shortly; GET /api/health?checks=true shows which part is down.' },
  DATABASE_UNAVAILABLE: { status: 503, message: 'The database is unavailable.', nextActions: 'Try again shortly; the operator should check DATABASE_URL and the database server.' },
  QUERY_TIMEOUT: { status: 503, message: 'The database query took too long and was cancelled.', nextActions: 'Narrow the query (filters, limit) or try again.' },
  SERIALIZATION_FAILURE: { status: 409, message: 'The transaction conflicted with another one.', nextActions: 'Retry the request.' },
  // auth
  INVALID_CREDENTIALS: { status: 401, message: 'Invalid email or password.', nextActions: 'Check the email and password, or reset the password.' },
  EMAIL_NOT_VERIFIED: { status: 403, message: 'The email address is not verified yet.', nextActions: 'Enter the code sent by email at POST /api/auth/email/verify, or ask for a new one at POST /api/auth/email/send-verification.' },
  INVALID_CODE: { status: 400, message: 'The code is wrong or has expired.', nextActions: 'Ask for a new code and try again.' },
  USER_BANNED: { status: 403, message: 'This account is banned.', nextActions: "Contact the app's administrator to have the ban lifted." },
  USER_NOT_FOUND: { status: 404, message: 'No such user.', nextActions: 'Check the user id; GET /api/auth/users lists users.' },
  INVALID_REFRESH_TOKEN: { status: 401, message: 'The refresh token is invalid, expired or already used.', nextActions: 'Sign in again.' },
  // auth: MFA, anonymous sign-in
  MFA_FACTOR_NOT_FOUND: { status: 404, message: 'No such MFA factor for this user.', nextActions: 'List your factors with GET /api/auth/mfa/factors (a challenge takes only verified ones).' },
  MFA_FACTOR_LIMIT: { status: 409, message: 'This account has as many MFA factors as it may.', nextActions: 'Remove a factor with DELETE /api/auth/mfa/factors/{id} first.' },
  AAL2_REQUIRED: { status: 403, message: 'This needs a session verified with a second factor (aal2).', nextActions: 'Verify a code of your factor with POST /api/auth/mfa/factors/{id}/verify, then retry with the new access token.' },
  ANONYMOUS_SIGNIN_DISABLED: { status: 403, message: 'Anonymous sign-in is turned off on this server.', nextActions: 'Sign up with an email and password, or ask the operator to set AUTH_ANONYMOUS_SIGNIN=true.' },
  NOT_ANONYMOUS: { status: 409, message: 'This account is not anonymous; it already has an email.', nextActions: 'Change the password with the reset-password flow instead.' },
  // auth: OAuth / OpenID Connect sign-in
  OAUTH_PROVIDER_NOT_FOUND: { status: 404, message: 'No such sign-in provider is configured on this server.', nextActions: 'Use a provider listed by GET /api/auth/public-config, or ask the operator to add it to OAUTH_PROVIDERS.' },
  REDIRECT_NOT_ALLOWED: { status: 400, message: 'This redirect URL is not allowed.', nextActions: 'Use a redirect URL listed in AUTH_REDIRECT_URLS, or ask the operator to add it (exact origin and path; a trailing * allows a path prefix).' },
  INVALID_OAUTH_STATE: { status: 400, message: 'This sign-in link is invalid, expired, already used, or was started in another browser.', nextActions: 'Start the sign-in again from the app, in this browser (it needs cookies).' },
  INVALID_OAUTH_CODE: { status: 400, message: 'The sign-in code is invalid, expired or already used, or the code verifier does not match.', nextActions: 'Start the sign-in again; send the code from the redirect once, with the code_verifier whose S256 challenge started it.' },
  INVALID_ID_TOKEN: { status: 401, message: 'The ID token is not valid.', nextActions: 'Sign in with the provider again and send the fresh ID token; check that the provider and client id match the server configuration.' },
  OAUTH_PROVIDER_REJECTED: { status: 400, message: 'The sign-in provider refused the request.', nextActions: 'Start the sign-in again; if it keeps failing, the operator should check the client id, secret and the callback URL registered at the provider.' },
  OAUTH_PROVIDER_UNAVAILABLE: { status: 502, message: 'The sign-in provider failed or could not be reached.', nextActions: 'Try again shortly; if it keeps failing, the operator should check the provider issuer URL and its status.' },
  OAUTH_EMAIL_NOT_VERIFIED: { status: 409, message: 'An account with this email exists, and the provider has not verified that the email is yours, so the accounts were not linked.', nextActions: 'Sign in to the existing account with its password (or reset it), or verify the email at the provider and try again.' },
  OAUTH_EMAIL_MISSING: { status: 400, message: 'The provider did not share an email address.', nextActions: 'Allow the app to see your email at the provider (a public or verified primary email on GitHub), then sign in again.' },
  OAUTH_EMAIL_INVALID: { status: 400, message: "The provider's email address is not a plain address this server accepts (full-width or look-alike characters, spaces).", nextActions: 'Use an account at the provider whose email is a plain address such as name@example.com, or sign up with email and password.' },
  OAUTH_LINK_NEEDS_CONSENT: { status: 409, message: 'An account with this email has a password and its email was never verified, so the provider was not linked and the password was kept.', nextActions: "Sign in with the account's password and verify the email, or reset the password with the emailed code (POST /api/auth/email/send-reset-password), then sign in with the provider again." },
  IDENTITY_NOT_FOUND: { status: 404, message: 'No such identity for this user.', nextActions: 'List your identities with GET /api/auth/identities.' },
  LAST_SIGN_IN_METHOD: { status: 409, message: 'This is the last way to sign in to the account; it cannot be removed.', nextActions: 'Link another provider or set a password first (POST /api/auth/email/send-reset-password), then remove this one.' },
  // data (tables, records, RPC, admin SQL)
  TABLE_NOT_FOUND: { status: 404, message: 'No such table.', nextActions: 'Check the table name; GET /api/database/tables lists the tables.' },
  TABLE_EXISTS: { status: 409, message: 'A table with this name already exists.', nextActions: 'Pick another name, or change the existing table with PATCH /api/database/tables/{tableName}/schema.' },
  UNKNOWN_COLUMN: { status: 400, message: 'No such column.', nextActions: 'Check the column name; GET /api/database/tables/{tableName}/schema lists the columns.' },
  INVALID_VALUE: { status: 400, message: 'A value does not fit its column type.', nextActions: 'Send a value of the column type: see GET /api/database/tables/{tableName}/schema.' },
  INVALID_QUERY: { status: 400, message: 'The query string is not valid.', nextActions: 'Use filters of the form <column>=<operator>.<value>, e.g. ?age=gte.18&order=name.asc&limit=20.' },
  FILTER_REQUIRED: { status: 400, message: 'Updating or deleting records needs at least one filter.', nextActions: 'Add a filter such as ?id=eq.<id> so that a typo cannot change the whole table.' },
  STILL_REFERENCED: { status: 409, message: 'The row is still referenced by another table.', nextActions: 'Delete or change the referencing rows first, or use onDelete CASCADE or SET NULL on the foreign key.' },
  RPC_NOT_FOUND: { status: 404, message: 'No such database function.', nextActions: 'Check the name; create functions in schema public with POST /api/database/sql.' },
  AMBIGUOUS_FUNCTION: { status: 300, message: 'More than one overload of the function matches these arguments.', nextActions: 'Give argument names that only one overload takes (the details list the candidates), or rename or drop an overload.' },
  RELATION_NOT_FOUND: { status: 400, message: 'No relationship between these tables was found.', nextActions: 'Embed a table linked by a foreign key (either direction), or name the key with <table>!<constraint or column>(...); see docs/database.md "Embedding".' },
  AMBIGUOUS_RELATION: { status: 300, message: 'More than one relationship matches this embedding.', nextActions: 'Pick one with a hint, <table>!<constraint or column>(...), as the hint field lists.' },
  NOT_SINGLE_ROW: { status: 406, message: 'Cannot coerce the result to a single JSON object', nextActions: 'Filter to exactly one row (e.g. ?id=eq.<id>), or drop "Accept: application/vnd.pgrst.object+json" (.single()) to get an array; .maybeSingle() accepts zero rows.' },
  SCHEMA_NOT_EXPOSED: { status: 406, message: 'Only schema public is exposed.', nextActions: 'Drop the Accept-Profile / Content-Profile header (or .schema(...) in the client), or set it to public.' },
  MEDIA_NOT_AVAILABLE: { status: 406, message: 'None of these media types are available.', nextActions: 'Accept application/json (or */*), application/vnd.pgrst.object+json, application/vnd.pgrst.array+json;nulls=stripped or text/csv; geo+json needs PostGIS and the plan media type an admin key (docs/database.md "Output formats").' },
  INVALID_RANGE: { status: 416, message: 'The Range header is not valid.', nextActions: 'Send "Range: <first>-<last>" with first <= last (e.g. "Range: 0-19", unit items), or use limit and offset in the query string.' },
  TOO_MANY_AFFECTED: { status: 400, message: 'Query result exceeds max-affected preference constraint.', nextActions: 'Narrow the filters so fewer rows match, or raise (or drop) Prefer: max-affected=<n>; nothing was changed.' },
  READ_ONLY_CALL: { status: 405, message: 'This function may change data, so it cannot be called with GET or HEAD.', nextActions: 'Call it with POST (postgrest-js: .rpc(name, args) without { get: true } or { head: true }), or declare it STABLE or IMMUTABLE if it only reads.' },
  FUNCTION_RAISED: { status: 400, message: 'The database function raised an error.', nextActions: 'Read the message, details and hint: the author of the function wrote them for the caller.' },
  FUNCTION_RAISE_INVALID: { status: 500, message: "Could not parse JSON in the RAISE SQLSTATE 'PGRST' error", nextActions: 'Fix the function: raise sqlstate \'PGRST\' using message = a JSON object of code, message, details and hint, and detail = a JSON object of status (400-599) and headers (docs/database.md "Errors raised by functions").' },
  SQL_ERROR: { status: 400, message: 'The SQL statement failed.', nextActions: 'Fix the statement as the message says and send it again.' },
  SQL_NOT_PERMITTED: { status: 403, message: 'The owner role that admin SQL runs as may not do this.', nextActions: 'Admin SQL is not a superuser: COPY ... PROGRAM, server files, ALTER SYSTEM, roles and Plinth\'s own schemas are out of reach. Create trusted extensions with CREATE EXTENSION and others with select system.create_extension(\'name\') (docs/database.md "The owner role").' },
  MIGRATION_APPLIED: { status: 409, message: 'This migration version is already applied.', nextActions: 'Nothing to do; write a new migration with a higher version for further changes (npm run plinth -- db migrations new <name>).' },
  MIGRATION_DRIFT: { status: 409, message: 'This migration version was applied with other SQL.', nextActions: 'Restore the file as it was applied (GET /api/database/migrations shows its checksum) and put the change in a new migration with a higher version.' },
  // logs and metrics
  INVALID_LOG_QUERY: { status: 400, message: 'The log query is not valid.', nextActions: 'Fix the parameter the message names: from and to are ISO 8601 times (from before to), level one of debug, info, warn, error, limit 1-1000, cursor as the last page returned it.' },
  LOG_SOURCE_NOT_FOUND: { status: 404, message: 'No such log source.', nextActions: 'Use a source listed by GET /api/logs/sources (api, auth, functions, realtime, postgres, …).' },
  METRICS_UNAUTHORIZED: { status: 401, message: 'The metrics need the admin API key or the metrics token.', nextActions: 'Send "Authorization: Bearer <METRICS_TOKEN>" (Prometheus: authorization.credentials) or the admin key in x-api-key.' },
  INVALID_BULK_FILE: { status: 400, message: 'The bulk-upsert file is not valid.', nextActions: 'Send multipart/form-data with "table", an optional "upsertKey" and "file": a .csv file with a header line or a .json array of objects.' },
  // ai
  AI_NOT_CONFIGURED: { status: 503, message: 'The AI gateway is not configured on this server.', nextActions: 'The operator must set AI_BASE_URL (e.g. https://api.openai.com/v1) and AI_API_KEY, then restart Plinth; docs/ai.md shows settings for OpenAI, OpenRouter and local servers.' },
  MODEL_NOT_ALLOWED: { status: 400, message: 'This model is not allowed on this server.', nextActions: 'Use one of the models listed in AI_MODELS, or ask the operator to add it.' },
  AI_UPSTREAM_REJECTED: { status: 400, message: 'The AI provider rejected the request.', nextActions: 'Fix the request as the message says (model name, parameters, message format) and send it again.' },
  AI_UPSTREAM_RATE_LIMITED: { status: 429, message: 'The AI provider is limiting requests from this server.', nextActions: 'Wait a little (see Retry-After when present) and try again.' },
  AI_UPSTREAM_ERROR: { status: 502, message: 'The AI provider failed or could not be reached.', nextActions: 'Try again shortly; if it keeps failing, the operator should check AI_BASE_URL, AI_API_KEY and the provider status.' },
  AI_UPSTREAM_TIMEOUT: { status: 504, message: 'The AI provider did not answer in time.', nextActions: 'Try again, with a shorter prompt, a lower max_tokens or stream: true; the operator can raise AI_TIMEOUT_MS.' },
  AI_BUDGET_EXCEEDED: { status: 429, message: 'The daily AI token budget is spent.', nextActions: 'Try again after midnight UTC (see Retry-After), or ask the operator to raise AI_USER_DAILY_TOKENS.' },
  // storage
  BUCKET_NOT_FOUND: { status: 404, message: 'No such bucket.', nextActions: 'Check the bucket name; GET /api/storage/buckets lists buckets (admin).' },
  OBJECT_NOT_FOUND: { status: 404, message: 'No such object.', nextActions: 'Check the bucket and key; an admin can list objects with GET /api/storage/buckets/{bucketName}/objects.' },
  INVALID_KEY: { status: 400, message: 'The object key is not valid.', nextActions: 'Use 1-1024 bytes; "/" separates folders; no leading "/", no "." or ".." segments, no backslash or control characters.' },
  INVALID_MULTIPART: { status: 400, message: 'The multipart form is not valid.', nextActions: 'Send multipart/form-data with the file in a field named "file" (and an optional "path" field before it).' },
  UPLOAD_NOT_FOUND: { status: 404, message: 'No upload was started for this key.', nextActions: 'Ask for an upload with POST /api/storage/buckets/{bucketName}/upload-strategy first.' },
  UPLOAD_INCOMPLETE: { status: 400, message: 'The object has not been uploaded yet.', nextActions: 'Upload the file to uploadUrl with the returned fields, then confirm again.' },
  UPLOAD_MISMATCH: { status: 400, message: 'The uploaded object does not match the size or ETag given.', nextActions: 'Upload the file again and confirm with its exact size in bytes.' },
  INVALID_SIGNED_URL: { status: 403, message: 'The signed URL is invalid or has expired.', nextActions: 'Ask for a new URL with POST .../objects/{objectKey}/download-strategy.' },
  INSUFFICIENT_STORAGE: { status: 507, message: 'The server has no space left to store the object.', nextActions: 'Nothing was stored; try again later. The operator must free or add disk space under DATA_DIR/storage (or move storage to S3 with S3_BUCKET).' },
  RANGE_NOT_SATISFIABLE: { status: 416, message: 'The requested range is not satisfiable.', nextActions: 'Ask for a byte range inside the object; its size is in the Content-Range header.' },
  RESUMABLE_UPLOAD_NOT_FOUND: { status: 404, message: 'No such resumable upload, or it has expired.', nextActions: 'Start a new upload with POST /api/storage/upload/resumable (tus clients do this when resuming fails).' },
  UPLOAD_OFFSET_MISMATCH: { status: 409, message: 'Upload-Offset does not match the bytes the server holds.', nextActions: 'Send HEAD to the upload URL and resume from the Upload-Offset it answers.' },
  TUS_VERSION_UNSUPPORTED: { status: 412, message: 'The request does not speak tus 1.0.0.', nextActions: 'Send the header "Tus-Resumable: 1.0.0" (tus clients such as tus-js-client do).' },
  UPLOAD_TOO_LONG: { status: 413, message: 'The bytes sent go past the declared Upload-Length.', nextActions: 'Send exactly Upload-Length bytes in all; HEAD the upload URL for the offset held.' },
  NOT_AN_IMAGE: { status: 415, message: 'The object is not an image that can be transformed.', nextActions: 'Transform only JPEG, PNG, WebP, AVIF, GIF or TIFF objects; fetch other objects without width, height, resize, format or quality.' },
  IMAGE_TOO_LARGE: { status: 422, message: 'The image is too large to transform.', nextActions: 'Transform images of at most IMAGE_MAX_INPUT_PIXELS pixels and IMAGE_MAX_INPUT_BYTES bytes; fetch the original without transform parameters.' },
  // functions
  FUNCTION_NOT_FOUND: { status: 404, message: 'No such function, or it is not active.', nextActions: 'Check the slug; GET /api/functions lists functions and their status (only active ones run).' },
  INVALID_CODE_SYNTAX: { status: 400, message: 'The function code has a syntax error.', nextActions: 'Fix the code at the line and column given, then save it again.' },
  INVALID_FUNCTION_CODE: { status: 400, message: 'The function code is not a valid function module.', nextActions: 'Export a default async function that takes a Request and returns a Response.' },
  FUNCTION_CODE_TOO_LARGE: { status: 413, message: 'The function code is too large.', nextActions: 'Keep function code under 1 MiB; move data out of the code.' },
  FUNCTION_ERROR: { status: 500, message: 'The function threw an error.', nextActions: 'An admin can read the error in GET /api/functions/{slug}/logs.' },
  FUNCTION_MEMORY_LIMIT: { status: 500, message: 'The function exceeded its memory limit and was restarted.', nextActions: 'Use less memory per request, or ask the operator to raise FUNCTION_MEMORY_MB.' },
  FUNCTION_TIMEOUT: { status: 504, message: 'The function took too long and was stopped.', nextActions: 'Make the function finish sooner, or ask the operator to raise FUNCTION_TIMEOUT_MS.' },
  FUNCTION_RUNTIME_UNAVAILABLE: { status: 502, message: 'The function runtime could not be reached.', nextActions: 'Try again shortly; GET /api/health?checks=true shows the runtime status.' },
  SECRET_NOT_FOUND: { status: 404, message: 'No such secret.', nextActions: 'Check the name; GET /api/secrets lists secrets.' },
  // automation: schedules, database webhooks, email
  SCHEDULE_NOT_FOUND: { status: 404, message: 'No such schedule.', nextActions: 'Check the id; GET /api/schedules lists schedules.' },
  INVALID_CRON: { status: 400, message: 'The cron expression is not valid.', nextActions: 'Use 5 fields (minute hour day month weekday), 6 with seconds first, a name such as "@hourly", or "N seconds" for 1 to 59 seconds.' },
  INVALID_TIMEZONE: { status: 400, message: 'The time zone is not an IANA time zone.', nextActions: 'Use a name such as "UTC", "Europe/Paris" or "America/New_York".' },
  OUTBOUND_NOT_ALLOWED: { status: 400, message: 'The target URL is not allowed.', nextActions: 'Use a public http(s) URL; an operator can allow an internal receiver by listing its host, host:port or CIDR in OUTBOUND_ALLOW_HOSTS.' },
  JOBS_UNAVAILABLE: { status: 503, message: 'Background jobs are not running on this server.', nextActions: 'Run Plinth on the embedded Postgres or a Postgres server (DATABASE_URL); PGlite does not run schedules, webhooks or queued email.' },
  QUEUE_FULL: { status: 503, message: 'Too many jobs are waiting.', nextActions: 'Try again shortly; GET /api/health?checks=true shows the queue depth and its bound (JOBS_MAX_QUEUED).' },
  WEBHOOK_NOT_FOUND: { status: 404, message: 'No such webhook.', nextActions: 'Check the id; GET /api/database/webhooks lists webhooks.' },
  WEBHOOK_DISABLED: { status: 409, message: 'The webhook is disabled.', nextActions: 'Enable it with PATCH /api/database/webhooks/{id} {"enabled": true}, then redeliver.' },
  DELIVERY_NOT_FOUND: { status: 404, message: 'No such delivery.', nextActions: 'Check the id; GET /api/database/webhooks/{id}/deliveries lists deliveries.' },
  EMAIL_NOT_CONFIGURED: { status: 503, message: 'Email is not configured on this server.', nextActions: 'The operator must set SMTP_URL (smtp://user:pass@host:587) and MAIL_FROM, then restart.' },
  EMAIL_NOT_ALLOWED: { status: 403, message: 'You may not send email.', nextActions: 'Send with the admin API key, or ask an admin to allow users to send (EMAIL_ALLOW_USERS=true).' },
  TEMPLATE_NOT_FOUND: { status: 404, message: 'No such email template.', nextActions: 'GET /api/email/templates lists the templates: verification, reset-password, magic-link.' },
  // mcp (the MCP server and the docs for agents)
  MCP_SESSION_NOT_FOUND: { status: 404, message: 'No such MCP session: it ended or this server was restarted.', nextActions: 'Start a new session: send an initialize request without the Mcp-Session-Id header.' },
  MCP_TOO_MANY_SESSIONS: { status: 503, message: 'Too many MCP sessions are open on this server.', nextActions: 'Close sessions you no longer use (DELETE /api/mcp with their Mcp-Session-Id) or wait for idle ones to expire, then try again.' },
  DOC_NOT_FOUND: { status: 404, message: 'No such document.', nextActions: 'GET /api/docs lists the documents this server has.' },
  NOT_SUPPORTED: { status: 501, message: 'Plinth does not do this.', nextActions: 'See GET /api/docs/instructions for what this server offers.' },
  // backups kept on the server (/api/admin/backups)
  BACKUP_RUNNING: { status: 409, message: 'A backup is being made.', nextActions: 'Wait until GET /api/admin/backups shows it ready (or failed), then try again.' },
  BACKUP_NOT_FOUND: { status: 404, message: 'No such backup on this server.', nextActions: 'GET /api/admin/backups lists the backups kept on the server.' },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERRORS;

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERRORS, code);
}
