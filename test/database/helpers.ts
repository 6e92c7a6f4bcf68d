import type { TestApp } from '../helpers/app.js';

/** JSON request helper: returns status, parsed body (or null) and headers. */
export async function call(
  t: TestApp,
  method: string,
  path: string,
  opts: { headers?: Record<string, string>; body?: unknown; rawBody?: string } = {},
): Promise<{ status: number; body: any; headers: Headers; text: string }> {
  const headers: Record<string, string> = { ...opts.headers };
  let body: string | undefined;
  if (opts.rawBody !== undefined) {
    body = opts.rawBody;
    headers['content-type'] ??= 'application/json';
  } else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] = 'application/json';
  }
  const res = await t.fetch(path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  return { status: res.status, body: parsed, headers: res.headers, text };
}

export const admin = (t: TestApp) => ({ 'x-api-key': t.adminKey });
export const anon = (t: TestApp) => ({ apikey: t.anonKey });

/** Runs SQL through the admin SQL endpoint and fails loudly if it does not succeed. */
export async function sql(t: TestApp, query: string, params: unknown[] = []) {
  const r = await call(t, 'POST', '/api/database/sql', { headers: admin(t), body: { query, params } });
  if (r.status !== 200) throw new Error(`SQL failed (${r.status}): ${r.text}`);
  return r.body as { rows: any[]; rowCount: number };
}

/** Asserts the error envelope shape and returns it. */
export function envelope(r: { body: any }) {
  const b = r.body;
  if (!b || typeof b.statusCode !== 'number' || typeof b.error !== 'string' || typeof b.message !== 'string' || typeof b.nextActions !== 'string') {
    throw new Error(`not an error envelope: ${JSON.stringify(b)}`);
  }
  return b as { statusCode: number; error: string; message: string; nextActions: string };
}
