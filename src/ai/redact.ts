// Anything the upstream sends may echo Plinth's API key: an error message quoting the
// Authorization header, a proxy's HTML page, an error event in a stream. Upstream text
// reaches an answer or a log line only through `redact`; errors leave the gateway only
// through `redactError`, which applies it to every message, stack and cause.
import { AppError } from '../errors/index.js';

const KEY_SHAPED = /\b(sk|rk|pk)-[A-Za-z0-9_*.-]{6,}/g;
/** Longest message kept in a log line. */
const MAX_TEXT = 2000;
const MAX_STACK = 8000;
const MAX_CAUSES = 5;

/**
 * `text` with `apiKey` and anything shaped like a provider key (`sk-…`) replaced by
 * "[redacted]", then cut to `max` characters: in that order, so a cut never leaves part of a
 * key behind.
 */
export function redact(text: string, apiKey: string | null, max = MAX_TEXT): string {
  let out = apiKey ? text.split(apiKey).join('[redacted]') : text;
  out = out.replace(KEY_SHAPED, '[redacted]');
  return out.length > max ? `${out.slice(0, max)}…` : out;
}

/**
 * A copy of `err` safe to log or answer with: message, stack and causes redacted; other
 * properties (an HTTP parser error's raw bytes, say) dropped, except a string `code`. An
 * AppError stays an AppError with the same code, status and headers.
 */
export function redactError(err: AppError, apiKey: string | null): AppError;
export function redactError(err: unknown, apiKey: string | null): Error;
export function redactError(err: unknown, apiKey: string | null): Error {
  return copy(err, apiKey, 0);
}

function copy(err: unknown, apiKey: string | null, depth: number): Error {
  if (!(err instanceof Error)) return new Error(redact(String(err), apiKey));
  const cause =
    err.cause === undefined
      ? undefined
      : depth < MAX_CAUSES
        ? copy(err.cause, apiKey, depth + 1)
        : new Error('(more causes)');
  const message = redact(err.message, apiKey);
  let out: Error;
  if (err instanceof AppError) {
    out = new AppError(err.code, { message, nextActions: err.nextActions, headers: err.headers, cause });
  } else {
    out = new Error(message, { cause });
    out.name = err.name;
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string') (out as Error & { code: string }).code = redact(code, apiKey, 100);
  }
  out.stack = redact(err.stack ?? '', apiKey, MAX_STACK);
  return out;
}
