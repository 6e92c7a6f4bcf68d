import type { TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';

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
  if (
    !b ||
    typeof b.statusCode !== 'number' ||
    typeof b.error !== 'string' ||
    typeof b.message !== 'string' ||
    typeof b.nextActions !== 'string'
  ) {
    throw new Error(`not an error envelope: ${JSON.stringify(b)}`);
  }
  return b as { statusCode: number; error: string; message: string; nextActions: string };
}
