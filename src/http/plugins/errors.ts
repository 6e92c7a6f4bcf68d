import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, internalErrorBody, type ErrorBody, type ErrorCode } from '../../errors/index.js';
import { pgErrorInfo } from '../../db/errors.js';
import { constraintAnswer } from '../../database/records-errors.js';

const BY_FASTIFY_CODE: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'INVALID_INPUT',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_JSON',
  FST_ERR_BAD_URL: 'INVALID_INPUT',
  FST_ERR_MAX_PARAM_LENGTH: 'URI_TOO_LONG',
};

const BY_STATUS: Record<number, ErrorCode> = {
  400: 'INVALID_INPUT',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
};

/**
 * 5xx answers that report a fault of the user's function, not of the server: a warning in the
 * server log (the function's own logs have the detail), not an error.
 */
const FUNCTION_FAULTS = new Set<ErrorCode>(['FUNCTION_ERROR', 'FUNCTION_TIMEOUT', 'FUNCTION_MEMORY_LIMIT']);

/** 5xx answers that state how the server is set up (a feature left off), not a failure: info. */
const SETUP_STATES = new Set<ErrorCode>(['AI_NOT_CONFIGURED']);

/**
 * The log line of an error answer: a failing dependency (an error with a cause) at error with
 * its cause and stack; a 5xx Plinth chose without one (a runtime that is down, a feature that is
 * off) without a stack; a client's mistake at info.
 */
function logAnswer(log: LineLogger, appErr: AppError): void {
  const line = { code: appErr.code };
  if (SETUP_STATES.has(appErr.code) || appErr.status < 500) log.info(line, appErr.message);
  else if (FUNCTION_FAULTS.has(appErr.code) || appErr.cause === undefined) log.warn(line, appErr.message);
  else log.error({ err: appErr.cause, ...line }, appErr.message);
}

/** A request's logger, as far as an error answer writes to it. */
type LineLogger = Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;

/** PostgREST's `code` for errors that have no SQLSTATE (postgrest-js users test for these). */
const PGRST_CODES: Partial<Record<ErrorCode, string>> = {
  INVALID_TOKEN: 'PGRST301',
  AUTH_UNAUTHORIZED: 'PGRST301',
  INVALID_QUERY: 'PGRST100',
  TABLE_NOT_FOUND: 'PGRST205',
  RPC_NOT_FOUND: 'PGRST202',
  AMBIGUOUS_FUNCTION: 'PGRST203',
  RELATION_NOT_FOUND: 'PGRST200',
  AMBIGUOUS_RELATION: 'PGRST201',
  NOT_SINGLE_ROW: 'PGRST116',
  INVALID_RANGE: 'PGRST103',
  TOO_MANY_AFFECTED: 'PGRST124',
  MEDIA_NOT_AVAILABLE: 'PGRST107',
  INVALID_JSON: 'PGRST102',
  SCHEMA_NOT_EXPOSED: 'PGRST106',
  UNKNOWN_COLUMN: '42703',
  FILTER_REQUIRED: '21000',
};

/** The body of an error on a database route: our envelope plus PostgREST's code, details and hint. */
export function postgrestBody(
  appErr: AppError,
): ErrorBody & { code: string; details: AppError['details']; hint: string | null } {
  const code = appErr.pgrstCode ?? pgErrorInfo(appErr.cause)?.code ?? PGRST_CODES[appErr.code] ?? appErr.code;
  return { ...appErr.toBody(), code, details: appErr.details, hint: appErr.hint };
}

interface AjvError {
  instancePath: string;
  keyword: string;
  params: { allowedValue?: unknown; allowedValues?: unknown[] };
}

/**
 * A choice of fixed values (a union of literals, an enum) said as one: "querystring/range must
 * be one of 1h, 24h, 7d, 30d" instead of Ajv's "must be equal to constant" once per choice and
 * "must match a schema in anyOf". Null when the failure is of another kind.
 */
function validationMessage(e: { validation?: unknown; validationContext?: string }): string | null {
  const errors = e.validation as AjvError[];
  if (!Array.isArray(errors) || !errors.length) return null;
  const path = errors[0]!.instancePath;
  if (!errors.every((x) => x.instancePath === path && ['const', 'enum', 'anyOf'].includes(x.keyword))) return null;
  const values = errors.flatMap((x) =>
    x.keyword === 'const' ? [x.params.allowedValue] : x.keyword === 'enum' ? (x.params.allowedValues ?? []) : [],
  );
  if (!values.length) return null;
  return `${e.validationContext ?? 'request'}${path || ''} must be one of ${values.map((v) => String(v)).join(', ')}`;
}

/** Turns any thrown value into a client-safe AppError, or null for an unexpected failure. */
export function toAppError(err: unknown): AppError | null {
  if (err instanceof AppError) return err;
  const e = err as FastifyError & { validation?: unknown };
  if (e && typeof e === 'object') {
    if (e.validation)
      return new AppError('INVALID_INPUT', { message: `Invalid request: ${validationMessage(e) ?? e.message}.` });
    const byCode = e.code ? BY_FASTIFY_CODE[e.code] : undefined;
    if (byCode) return new AppError(byCode, { message: byCode === 'INVALID_JSON' ? undefined : e.message });
    // JSON.parse failures from Fastify's body parser carry a 400 status.
    if (e instanceof SyntaxError && e.statusCode === 400) return new AppError('INVALID_JSON');
    // Other client errors raised by Fastify itself carry their own status and safe text.
    if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
      return new AppError(BY_STATUS[e.statusCode] ?? 'INVALID_INPUT', { message: e.message });
    }
  }
  return null;
}

/** Fastify's `frameworkErrors` option: URL errors found before routing get the envelope too. */
export function frameworkErrorHandler(err: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const appErr = toAppError(err) ?? new AppError('INVALID_INPUT');
  reply.status(appErr.status).type('application/json').send(appErr.toBody());
}

/** An error's answer: status, headers and the envelope (sent as JSON, `application/json; charset=utf-8`). */
export interface ErrorAnswer {
  status: number;
  headers: Record<string, string>;
  body: object;
}

/**
 * The answer to an error thrown while serving a request, and its log line: the envelope (with
 * PostgREST's code, details and hint on the database routes, `postgrest`), or a 500 that names
 * only the request id. Fastify's error handler and the front lane (http/lanes/) both answer
 * through it, so an error is answered the same way whichever served the request.
 */
export function errorAnswer(
  err: unknown,
  request: { url: string; id: string; log: LineLogger; postgrest: boolean },
): ErrorAnswer {
  const found = toAppError(err);
  if (!found) {
    request.log.error({ err }, 'unhandled error');
    return { status: 500, headers: {}, body: internalErrorBody(request.id) };
  }
  // /api/db answers constraint violations with Postgres's own text, as PostgREST; the primary
  // path keeps Plinth's wording.
  const appErr = (request.url.startsWith('/api/db/') && constraintAnswer(found)) || found;
  logAnswer(request.log, appErr);
  const body = request.postgrest ? postgrestBody(appErr) : appErr.toBody();
  return { status: appErr.status, headers: appErr.headers, body };
}

/** The error envelope on every error, and 404 for unknown routes. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err, request, reply) => {
    const postgrest = request.routeOptions.config?.postgrest === true;
    const a = errorAnswer(err, { url: request.url, id: request.id, log: request.log, postgrest });
    return reply.status(a.status).headers(a.headers).type('application/json').send(a.body);
  });
  app.setNotFoundHandler((request, reply) => {
    const err = new AppError('ROUTE_NOT_FOUND', {
      message: `No endpoint ${request.method} ${request.url.split('?')[0]}.`,
    });
    return reply.status(err.status).send(err.toBody());
  });
}
