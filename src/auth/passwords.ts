import { hash, verify } from '@node-rs/argon2';
import { randomHex } from '../lib/crypto.js';

// argon2id with the OWASP-recommended cost (19 MiB, 2 passes, 1 lane). `Algorithm` is a
// const enum in the package's typings, which isolatedModules cannot import: 2 = Argon2id.
const OPTIONS = { algorithm: 2 as const, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

/** Hashes a password with argon2id; the PHC string carries salt and parameters. */
export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

/**
 * Checks a password against a stored hash. A malformed stored hash (e.g. an account
 * created without a password) never matches; it does not throw.
 */
export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}

/**
 * A hash of a random password with the same parameters as real hashes: checking a password
 * against it costs what a real check costs, so "no such email" and "wrong password" take
 * the same time. Built once per process.
 */
export class DummyHash {
  private value: Promise<string> | null = null;
  get(): Promise<string> {
    this.value ??= hashPassword(randomHex(16));
    return this.value;
  }
}
