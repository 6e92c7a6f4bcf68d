import { expect } from 'vitest';
import type { Answer } from '../helpers/http.js';

/** Asserts the error envelope with the given status and code. */
export function expectError(a: Answer, status: number, code?: string): void {
  expect(a.status, JSON.stringify(a.body)).toBe(status);
  expect(a.body).toMatchObject({
    statusCode: status,
    error: code ?? expect.any(String),
    message: expect.any(String),
    nextActions: expect.any(String),
  });
}

let n = 0;
export const uniqueEmail = (tag = 'u') => `${tag}-${Date.now().toString(36)}-${(n++).toString(36)}@example.com`;

export const USER_SHAPE = {
  id: expect.stringMatching(/^[0-9a-f-]{36}$/),
  email: expect.any(String),
  emailVerified: expect.any(Boolean),
  profile: expect.any(Object),
  providers: expect.any(Array),
  createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
  updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
  metadata: null,
  isAnonymous: false,
  factors: [],
  bannedUntil: null,
  banReason: null,
};

/** The claims of a JWT (not checked: the server already did). */
export const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
