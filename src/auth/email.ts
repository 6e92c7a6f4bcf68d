import { AppError } from '../errors/index.js';

// Deliberately simple, like browsers' type=email: one @, no spaces, a dotted domain of
// letters, digits and hyphens. The real check is the code sent to the address.
const EMAIL = /^[^\s\x00-\x1f\x7f@"<>()\[\]\\,;:]{1,64}@(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

/** Trims and lower-cases an email address without judging it (for look-ups). */
export function normalizeEmail(raw: string): string {
  return raw.trim().toLowerCase();
}

/** Normalises an email address and checks its shape; throws INVALID_INPUT when it is not one. */
export function parseEmail(raw: string): string {
  const email = normalizeEmail(raw);
  if (!EMAIL.test(email)) {
    throw new AppError('INVALID_INPUT', {
      message: 'email must be a valid email address.',
      nextActions: 'Send an address of the form name@example.com.',
    });
  }
  return email;
}
