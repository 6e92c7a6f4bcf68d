import { createClient } from '@insforge/sdk';
import { PostgrestClient } from '@supabase/postgrest-js';
import { startApp, type TestApp } from '../helpers/app.js';
import type { Backend } from '../helpers/db.js';
import { sql } from '../database/helpers.js';

export type SdkClient = ReturnType<typeof createClient>;

/**
 * A real `@insforge/sdk` client against the test server, as an app would make one: base URL
 * and anon key. No retries (a 5xx should fail the test, not be retried for seconds).
 */
export function sdk(t: TestApp, extra: Parameters<typeof createClient>[0] = {}): SdkClient {
  return createClient({ baseUrl: t.url, anonKey: t.anonKey, retryCount: 0, ...extra });
}

/** A signed-up, signed-in SDK client with its email and password. */
export async function signedInClient(t: TestApp, tag = 'u') {
  const client = sdk(t);
  const email = `${tag}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const password = 'password-1';
  const { data, error } = await client.auth.signUp({ email, password, name: tag });
  if (error || !data?.accessToken) throw new Error(`sign-up failed: ${JSON.stringify(error)}`);
  return { client, email, password, user: data.user!, accessToken: data.accessToken, refreshToken: data.refreshToken! };
}

/** A test server on `backend` with `statements` run as admin SQL, and postgrest-js at /api/db as the admin. */
export async function postgrestServer(
  backend: Backend,
  statements: readonly string[],
): Promise<{ t: TestApp; db: PostgrestClient }> {
  const t = await startApp(backend);
  for (const s of statements) await sql(t, s);
  return { t, db: new PostgrestClient(`${t.url}/api/db`, { headers: { Authorization: `Bearer ${t.adminKey}` } }) };
}
