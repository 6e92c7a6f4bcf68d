// What the HTTP tests of functions share: Plinth with the Echo function saved, and the admin's calls.
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import type { Backend } from '../helpers/db.js';

/**
 * The package cache (FUNCTION_PACKAGES_DIR) the tests of functions that import packages share,
 * across files and runs: only the first run downloads from the registry.
 */
export const PACKAGES_CACHE = path.join(tmpdir(), 'plinth-test-function-packages');

/** Answers with what it was called with (method, path, query, headers, body) and the env it sees. */
export const ECHO = `
export default async function (req: Request): Promise<Response> {
  const url = new URL(req.url);
  const type = req.headers.get('content-type') ?? '';
  const body = req.method === 'GET' || req.method === 'HEAD' ? null
    : type.includes('json') ? await req.json()
    : await req.text();
  console.log('called', req.method, url.pathname);
  return Response.json({
    method: req.method,
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: Object.fromEntries(req.headers),
    body,
    env: { GREETING: Deno.env.get('GREETING') ?? null, HOME: Deno.env.get('HOME') ?? null },
  });
}`;

/** The body as JSON, or an error that shows the status and the start of the text. */
export async function json(r: Response): Promise<any> {
  const text = await r.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`not JSON (${r.status}): ${text.slice(0, 300)}`);
  }
}

export function expectEnvelope(body: any, status: number, code: string) {
  expect(body).toMatchObject({ statusCode: status, error: code });
  expect(typeof body.message).toBe('string');
  expect(typeof body.nextActions).toBe('string');
}

export interface FunctionsApp {
  t: TestApp;
  /** Headers of an admin's JSON request. */
  admin: Record<string, string>;
  /** POST /api/functions as the admin. */
  create(body: Record<string, unknown>): Promise<Response>;
  /** PUT /api/functions/{slug} as the admin. */
  update(slug: string, body: Record<string, unknown>): Promise<Response>;
}

/** Starts Plinth on `backend` with the function `echo` (ECHO) saved. */
export async function startFunctionsApp(backend: Backend): Promise<FunctionsApp> {
  const t = await startApp(backend);
  const admin = { 'x-api-key': t.adminKey, 'content-type': 'application/json' };
  const create = (body: Record<string, unknown>) =>
    t.fetch('/api/functions', { method: 'POST', headers: admin, body: JSON.stringify(body) });
  const update = (slug: string, body: Record<string, unknown>) =>
    t.fetch(`/api/functions/${slug}`, { method: 'PUT', headers: admin, body: JSON.stringify(body) });
  const r = await create({ name: 'Echo', code: ECHO, description: 'echoes the request' });
  if (r.status !== 201) {
    await t.close();
    throw new Error(`saving the echo function answered ${r.status}: ${await r.text()}`);
  }
  return { t, admin, create, update };
}
