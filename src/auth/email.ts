import { AppError } from '../errors/index.js';

// Deliberately simple, like browsers' type=email: one @, no spaces, a dotted domain of
// letters, digits and hyphens. The real check is the code sent to the address.
const EMAIL =
  /^[^\s\x00-\x1f\x7f@"<>()[\]\\,;:]{1,64}@(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

// Characters that make two addresses look alike without being equal: control, format
// (zero-width, joiners, BOM, bidi controls), surrogate, private-use and unassigned (\p{C}),
// any separator or space (\p{Z}), and the other default-ignorable ones that render as
// nothing (Hangul fillers, variation selectors, combining grapheme joiner).
const INVISIBLE = /[\p{C}\p{Z}\p{Default_Ignorable_Code_Point}]/u;

/**
 * NFKC-normalises, trims and lower-cases an email address without judging it (for
 * look-ups). NFKC comes first, so full-width and other compatibility forms (`Ｃ`, `ﬁ`) fold
 * to the letters they stand for before case folding, and spaces it produces (`¨` is a space
 * and a combining mark) are trimmed; normalising the result again changes nothing.
 */
export function normalizeEmail(raw: string): string {
  return raw.normalize('NFKC').trim().toLowerCase();
}

/** Normalises an email address and checks its shape; throws INVALID_INPUT when it is not one. */
export function parseEmail(raw: string): string {
  const email = normalizeEmail(raw);
  if (INVISIBLE.test(email) || !EMAIL.test(email)) {
    throw new AppError('INVALID_INPUT', {
      message: 'email must be a valid email address.',
      nextActions: 'Send an address of the form name@example.com, without invisible or control characters.',
    });
  }
  return email;
}
