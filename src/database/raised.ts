import { AppError } from '../errors/index.js';
import { safe } from './ident.js';

/**
 * PostgREST's errors raised by functions with an HTTP status of their own:
 * `raise sqlstate 'PGRST' using message = '{"code":..,"message":..,"details":..,"hint":..}',
 * detail = '{"status":402,"headers":{..}}'`, and `raise sqlstate 'PT402'` (status from the code,
 * message, detail and hint as written). Not JSON (or no status 400-599): 500 PGRST121, as PostgREST.
 * A plain `raise exception` (P0001): 400 with its message, detail and hint.
 */
export function raisedError(err: unknown, code: string): AppError | null {
  const e = err as { message?: unknown; detail?: unknown; hint?: unknown };
  const text = (v: unknown) => (typeof v === 'string' ? clean(v) : undefined);
  if (/^PT\d{3}$/.test(code)) {
    const status = Number(code.slice(2));
    if (status < 400 || status > 599) return null;
    return new AppError('FUNCTION_RAISED', {
      status,
      message: text(e.message),
      details: text(e.detail),
      hint: text(e.hint),
      pgrstCode: code,
      cause: err,
    });
  }
  // RAISE EXCEPTION: its message, DETAIL and HINT, as PostgREST passes them on.
  if (code === 'P0001') {
    return new AppError('INVALID_INPUT', {
      message: `The database function raised: ${safe(typeof e.message === 'string' ? e.message : '', 300)}`,
      details: typeof e.detail === 'string' ? safe(e.detail, 300) : undefined,
      hint: typeof e.hint === 'string' ? safe(e.hint, 300) : undefined,
      cause: err,
    });
  }
  if (code !== 'PGRST') return null;
  const message = parse(e.message);
  const detail = parse(e.detail);
  const status = detail?.status;
  if (!message || !detail || typeof status !== 'number' || !Number.isInteger(status) || status < 400 || status > 599) {
    return new AppError('FUNCTION_RAISE_INVALID', { pgrstCode: 'PGRST121', cause: err });
  }
  return new AppError('FUNCTION_RAISED', {
    status,
    message: text(message.message),
    details: text(message.details),
    hint: text(message.hint),
    pgrstCode: typeof message.code === 'string' ? clean(message.code).slice(0, 64) : 'PGRST',
    headers: headers(detail.headers),
    cause: err,
  });
}

function parse(v: unknown): Record<string, unknown> | null {
  if (typeof v !== 'string') return null;
  try {
    const o = JSON.parse(v) as unknown;
    return o && typeof o === 'object' && !Array.isArray(o) ? (o as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The function's text without control characters, at most 1000 characters. */
function clean(v: string): string {
  return v.replace(/[\x00-\x1f\x7f]/g, ' ').slice(0, 1000);
}

// Headers that frame the answer or belong to the server: a function may not set them.
const RESERVED = new Set([
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'trailer',
  'te',
  'host',
  'set-cookie',
]);

/** The function's headers: valid names and single-line values only, at most 20. */
function headers(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!v || typeof v !== 'object' || Array.isArray(v)) return out;
  for (const [name, value] of Object.entries(v).slice(0, 20)) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/.test(name) || RESERVED.has(name.toLowerCase())) continue;
    const s =
      typeof value === 'string'
        ? value
        : typeof value === 'number' || typeof value === 'boolean'
          ? String(value)
          : null;
    if (s !== null && s.length <= 1000 && !/[\x00-\x1f\x7f]/.test(s)) out[name] = s;
  }
  return out;
}
