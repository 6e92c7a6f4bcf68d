import { expect } from 'vitest';
import type { TestApp } from '../helpers/app.js';

export interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

/** JSON request against the test server; the body is parsed when there is one. */
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
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  return { status: r.status, body: parsed, headers: r.headers };
}

/** Asserts the error envelope with the given status and code. */
export function expectError(a: Answer, status: number, code?: string): void {
  expect(a.status, JSON.stringify(a.body)).toBe(status);
  expect(a.body).toMatchObject({ statusCode: status, error: code ?? expect.any(String), message: expect.any(String), nextActions: expect.any(String) });
}

let n = 0;
export const uniqueEmail = (tag = 'u') => `${tag}-${Date.now().toString(36)}-${(n++).toString(36)}@example.com`;

export const USER_SHAPE = {
  id: expect.stringMatching(/^[0-9a-f-]{36}$/),
  email: expect.any(String),
  emailVerified: expect.any(Boolean),
  profile: expect.any(Object),
  createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
};
