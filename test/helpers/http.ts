import type { TestApp } from './app.js';

export interface Answer {
  status: number;
  /** The body parsed as JSON; the text when it is not JSON; null when empty. */
  body: any;
  text: string;
  headers: Headers;
}

/**
 * A request against the test server: `body` is sent as JSON, `raw` as given (content-type
 * application/json unless a header says otherwise), `token` as a bearer token.
 */
export async function call(
  t: TestApp,
  method: string,
  path: string,
  opts: { body?: unknown; raw?: string; headers?: Record<string, string>; token?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined;
  if (opts.raw !== undefined) body = opts.raw;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
    headers['content-type'] = 'application/json';
  }
  const r = await t.fetch(path, { method, headers, body });
  const text = await r.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  return { status: r.status, body: parsed, text, headers: r.headers };
}
