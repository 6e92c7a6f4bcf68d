import { AppError } from '../../errors/index.js';

const TIMEOUT_MS = 10_000;
/** Provider answers are small JSON documents; anything larger is refused unread. */
const MAX_BYTES = 1024 * 1024;

export interface UpstreamAnswer {
  status: number;
  body: unknown;
}

/**
 * One request to a provider, answered as parsed JSON. Network failures, timeouts and
 * non-JSON answers are OAUTH_PROVIDER_UNAVAILABLE (502); the status is left to the caller.
 */
export async function upstreamJson(
  what: string,
  url: string,
  init: { method?: string; headers?: Record<string, string>; form?: Record<string, string> } = {},
): Promise<UpstreamAnswer> {
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'Plinth', ...init.headers };
  let body: string | undefined;
  if (init.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(init.form).toString();
  }
  let res: Response;
  try {
    res = await fetch(url, {
      method: init.method ?? (body ? 'POST' : 'GET'),
      headers,
      body,
      redirect: 'error',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    throw unavailable(`${what} could not be reached (${new URL(url).origin}).`, err);
  }
  const text = await res.text().catch(() => '');
  if (text.length > MAX_BYTES) throw unavailable(`${what} answered with an oversized body.`);
  if (res.status >= 500) throw unavailable(`${what} failed with HTTP ${res.status}.`);
  try {
    return { status: res.status, body: JSON.parse(text) };
  } catch {
    throw unavailable(`${what} did not answer JSON (HTTP ${res.status}).`);
  }
}

export function unavailable(message: string, cause?: unknown): AppError {
  return new AppError('OAUTH_PROVIDER_UNAVAILABLE', { message: `The sign-in provider failed: ${message}`, cause });
}

/** A string field of an untrusted JSON object, or null. */
export function field(body: unknown, key: string): string | null {
  if (!body || typeof body !== 'object') return null;
  const v = (body as Record<string, unknown>)[key];
  return typeof v === 'string' && v !== '' ? v : null;
}
