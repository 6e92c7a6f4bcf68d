import type { ErrorSpec } from '../spec.js';

/** Data: tables, records, RPC and admin SQL. */
export const DATA_ERRORS = {
  // data (tables, records, RPC, admin SQL)
  TABLE_NOT_FOUND: {
    status: 404,
    message: 'No such table.',
    nextActions: 'Check the table name; GET /api/database/tables lists the tables.',
  },
  TABLE_EXISTS: {
    status: 409,
    message: 'A table with this name already exists.',
    nextActions: 'Pick another name, or change the existing table with PATCH /api/database/tables/{tableName}/schema.',
  },
  UNKNOWN_COLUMN: {
    status: 400,
    message: 'No such column.',
    nextActions: 'Check the column name; GET /api/database/tables/{tableName}/schema lists the columns.',
  },
  INVALID_VALUE: {
    status: 400,
    message: 'A value does not fit its column type.',
    nextActions: 'Send a value of the column type: see GET /api/database/tables/{tableName}/schema.',
  },
  INVALID_QUERY: {
    status: 400,
    message: 'The query string is not valid.',
    nextActions: 'Use filters of the form <column>=<operator>.<value>, e.g. ?age=gte.18&order=name.asc&limit=20.',
  },
  FILTER_REQUIRED: {
    status: 400,
    message: 'Updating or deleting records needs at least one filter.',
    nextActions: 'Add a filter such as ?id=eq.<id> so that a typo cannot change the whole table.',
  },
  STILL_REFERENCED: {
    status: 409,
    message: 'The row is still referenced by another table.',
    nextActions: 'Delete or change the referencing rows first, or use onDelete CASCADE or SET NULL on the foreign key.',
  },
  RPC_NOT_FOUND: {
    status: 404,
    message: 'No such database function.',
    nextActions: 'Check the name; create functions in schema public with POST /api/database/sql.',
  },
  AMBIGUOUS_FUNCTION: {
    status: 300,
    message: 'More than one overload of the function matches these arguments.',
    nextActions:
      'Give argument names that only one overload takes (the message lists the candidates), or rename or drop an overload.',
  },
  RELATION_NOT_FOUND: {
    status: 400,
    message: 'No relationship between these tables was found.',
    nextActions:
      'Embed a table linked by a foreign key (either direction), or name the key with <table>!<constraint or column>(...); see docs/database.md "Embedding".',
  },
  AMBIGUOUS_RELATION: {
    status: 300,
    message: 'More than one relationship matches this embedding.',
    nextActions: 'Pick one with a hint, <table>!<constraint or column>(...), as the hint field lists.',
  },
  NOT_SINGLE_ROW: {
    status: 406,
    message: 'Cannot coerce the result to a single JSON object',
    nextActions:
      'Filter to exactly one row (e.g. ?id=eq.<id>), or drop "Accept: application/vnd.pgrst.object+json" (.single()) to get an array; .maybeSingle() accepts zero rows.',
  },
  SCHEMA_NOT_EXPOSED: {
    status: 406,
    message: 'Only schema public is exposed.',
    nextActions:
      'Drop the Accept-Profile / Content-Profile header (or .schema(...) in the client), or set it to public.',
  },
  MEDIA_NOT_AVAILABLE: {
    status: 406,
    message: 'None of these media types are available.',
    nextActions:
      'Accept application/json (or */*), application/vnd.pgrst.object+json, application/vnd.pgrst.array+json;nulls=stripped or text/csv; geo+json needs PostGIS and the plan media type an admin key (docs/database.md "Output formats").',
  },
  INVALID_RANGE: {
    status: 416,
    message: 'The Range header is not valid.',
    nextActions:
      'Send "Range: <first>-<last>" with first <= last (e.g. "Range: 0-19", unit items), or use limit and offset in the query string.',
  },
  TOO_MANY_AFFECTED: {
    status: 400,
    message: 'Query result exceeds max-affected preference constraint.',
    nextActions:
      'Narrow the filters so fewer rows match, or raise (or drop) Prefer: max-affected=<n>; nothing was changed.',
  },
  READ_ONLY_CALL: {
    status: 405,
    message: 'This function may change data, so it cannot be called with GET or HEAD.',
    nextActions:
      'Call it with POST (postgrest-js: .rpc(name, args) without { get: true } or { head: true }), or declare it STABLE or IMMUTABLE if it only reads.',
  },
  FUNCTION_RAISED: {
    status: 400,
    message: 'The database function raised an error.',
    nextActions: 'Read the message, details and hint: the author of the function wrote them for the caller.',
  },
  FUNCTION_RAISE_INVALID: {
    status: 500,
    message: "Could not parse JSON in the RAISE SQLSTATE 'PGRST' error",
    nextActions:
      'Fix the function: raise sqlstate \'PGRST\' using message = a JSON object of code, message, details and hint, and detail = a JSON object of status (400-599) and headers (docs/database.md "Errors raised by functions").',
  },
  SQL_ERROR: {
    status: 400,
    message: 'The SQL statement failed.',
    nextActions: 'Fix the statement as the message says and send it again.',
  },
  SQL_NOT_PERMITTED: {
    status: 403,
    message: 'The owner role that admin SQL runs as may not do this.',
    nextActions:
      "Admin SQL is not a superuser: COPY ... PROGRAM, server files, ALTER SYSTEM, roles and Plinth's own schemas are out of reach. Create trusted extensions with CREATE EXTENSION and others with select system.create_extension('name') (docs/database.md \"The owner role\").",
  },
  MIGRATION_APPLIED: {
    status: 409,
    message: 'This migration version is already applied.',
    nextActions:
      'Nothing to do; write a new migration with a higher version for further changes (npm run plinth -- db migrations new <name>).',
  },
  MIGRATION_DRIFT: {
    status: 409,
    message: 'This migration version was applied with other SQL.',
    nextActions:
      'Restore the file as it was applied (GET /api/database/migrations shows its checksum) and put the change in a new migration with a higher version.',
  },
} as const satisfies Record<string, ErrorSpec>;
