import { ERRORS, type ErrorCode } from './catalogue.js';

export { ERRORS, type ErrorCode, isErrorCode } from './catalogue.js';

export interface ErrorBody {
  statusCode: number;
  error: ErrorCode;
  message: string;
  nextActions: string;
  /** Where in the caller's text the error is (admin SQL), 1-based; only on errors that have one. */
  position?: TextPosition;
}

export interface TextPosition {
  line: number;
  column: number;
}

/** PostgREST's `details` when it is a list (the candidates of an ambiguous embed, PGRST201). */
export type ErrorDetails = ReadonlyArray<Record<string, string>>;

/** The one error type of Plinth. The catalogue picks the status; throw sites never do. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly nextActions: string;
  /** Extra response headers (e.g. Retry-After). */
  readonly headers: Record<string, string>;
  /** PostgREST-style extras, sent on database routes (`details`, `hint`, and `code` when not the SQLSTATE). */
  readonly details: string | ErrorDetails | null;
  readonly hint: string | null;
  readonly pgrstCode: string | null;

  readonly position: TextPosition | undefined;

  constructor(
    code: ErrorCode,
    opts: {
      message?: string;
      nextActions?: string;
      cause?: unknown;
      headers?: Record<string, string>;
      details?: string | ErrorDetails;
      hint?: string;
      pgrstCode?: string;
      position?: TextPosition;
      /** Only FUNCTION_RAISED: the status a database function chose (raise sqlstate 'PGRST'), 400-599. */
      status?: number;
    } = {},
  ) {
    const spec = ERRORS[code];
    super(opts.message ?? spec.message, { cause: opts.cause });
    this.name = 'AppError';
    this.code = code;
    this.status =
      code === 'FUNCTION_RAISED' && opts.status && opts.status >= 400 && opts.status <= 599 ? opts.status : spec.status;
    this.nextActions = opts.nextActions ?? spec.nextActions;
    this.headers = opts.headers ?? {};
    this.position = opts.position;
    this.details = opts.details ?? null;
    this.hint = opts.hint ?? null;
    this.pgrstCode = opts.pgrstCode ?? null;
  }

  toBody(): ErrorBody {
    const body: ErrorBody = {
      statusCode: this.status,
      error: this.code,
      message: this.message,
      nextActions: this.nextActions,
    };
    if (this.position) body.position = this.position;
    return body;
  }
}

/** The fixed body of an unexpected failure: never any internal text. */
export function internalErrorBody(requestId: string): ErrorBody {
  const spec = ERRORS.INTERNAL_ERROR;
  return {
    statusCode: 500,
    error: 'INTERNAL_ERROR',
    message: spec.message,
    nextActions: `Try again; if it keeps happening, report request id ${requestId} to the operator.`,
  };
}
