import type { ErrorSpec } from '../spec.js';

/** Generic request errors: validation, credentials, sizes, limits. */
export const REQUEST_ERRORS = {
  // generic request errors
  INVALID_INPUT: {
    status: 400,
    message: 'The request is not valid.',
    nextActions: 'Fix the request as the message says and send it again.',
  },
  MALFORMED_REQUEST: {
    status: 400,
    message: 'The request is not valid HTTP.',
    nextActions: 'Fix the request line, headers or body framing and send it again.',
  },
  URI_TOO_LONG: {
    status: 414,
    message: 'A path segment of the URL is too long.',
    nextActions: 'Use a shorter name or key.',
  },
  HEADERS_TOO_LARGE: {
    status: 431,
    message: 'The request headers are too large.',
    nextActions: 'Send fewer or smaller headers (cookies, tokens).',
  },
  INVALID_JSON: {
    status: 400,
    message: 'The request body is not valid JSON.',
    nextActions: 'Send a well-formed JSON body.',
  },
  UNAUTHORIZED: {
    status: 401,
    message: 'A valid credential is required.',
    nextActions: 'Send an access token as "Authorization: Bearer <token>", or an API key.',
  },
  INVALID_TOKEN: {
    status: 401,
    message: 'The access token is invalid.',
    nextActions: 'Send the access token exactly as sign-in returned it, or sign in again.',
  },
  AUTH_UNAUTHORIZED: {
    status: 401,
    message: 'The access token has expired or its session has ended.',
    nextActions:
      'Refresh the session with POST /api/auth/refresh (the InsForge SDK does this by itself), or sign in again.',
  },
  INVALID_API_KEY: {
    status: 401,
    message: 'The API key is not valid.',
    nextActions: 'Check the key; an admin can show the anon key with "npm run plinth -- keys show".',
  },
  FORBIDDEN: {
    status: 403,
    message: 'You are not allowed to do this.',
    nextActions: 'Use a credential that has access, such as the admin API key for admin endpoints.',
  },
  NOT_FOUND: {
    status: 404,
    message: 'Not found.',
    nextActions: 'Check the path; the API is described at GET /api/openapi.json.',
  },
  ROUTE_NOT_FOUND: {
    status: 404,
    message: 'No such endpoint.',
    nextActions: 'Check the method and path; the API is described at GET /api/openapi.json.',
  },
  ALREADY_EXISTS: {
    status: 409,
    message: 'It already exists.',
    nextActions: 'Use another name, or update the existing resource.',
  },
  CONFLICT: {
    status: 409,
    message: 'The request conflicts with the current state.',
    nextActions: 'Reload the resource and try again.',
  },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is too large.', nextActions: 'Send a smaller body.' },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    message: 'The content type is not supported.',
    nextActions: 'Send "Content-Type: application/json" (or multipart/form-data for uploads).',
  },
  EXPECTATION_FAILED: {
    status: 417,
    message: 'The Expect header is not supported.',
    nextActions: 'Send no Expect header, or "Expect: 100-continue".',
  },
  RATE_LIMITED: {
    status: 429,
    message: 'Too many requests.',
    nextActions: 'Wait for the number of seconds in the Retry-After header, then try again.',
  },
  INTERNAL_ERROR: {
    status: 500,
    message: 'Something went wrong on the server.',
    nextActions: 'Try again; if it keeps happening, report the X-Request-Id of this response to the operator.',
  },
  BACKUP_UNAVAILABLE: {
    status: 501,
    message: 'This server cannot back up its database itself.',
    nextActions: "Use pg_dump for a Postgres server at DATABASE_URL and the provider's tools for S3 (README, Backups).",
  },
  DASHBOARD_NOT_BUILT: {
    status: 503,
    message: 'The dashboard is not built on this server.',
    nextActions: 'Run `npm run build` in the Plinth folder (npm install runs it too), then reload /dashboard.',
  },
  SERVICE_UNAVAILABLE: {
    status: 503,
    message: 'A service this endpoint needs is unavailable.',
    nextActions: 'Try again shortly; GET /api/health?checks=true shows which part is down.',
  },
  DATABASE_UNAVAILABLE: {
    status: 503,
    message: 'The database is unavailable.',
    nextActions: 'Try again shortly; the operator should check DATABASE_URL and the database server.',
  },
  QUERY_TIMEOUT: {
    status: 503,
    message: 'The database query took too long and was cancelled.',
    nextActions: 'Narrow the query (filters, limit) or try again.',
  },
  READ_ONLY: {
    status: 403,
    message: 'The database refused a write: this runs read-only.',
    nextActions:
      'A read-only MCP connection (?readonly=1) changes nothing, also through views and functions: reconnect without ?readonly=1 to make changes.',
  },
  SERIALIZATION_FAILURE: {
    status: 409,
    message: 'The transaction conflicted with another one.',
    nextActions: 'Retry the request.',
  },
} as const satisfies Record<string, ErrorSpec>;
