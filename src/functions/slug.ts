import { randomBytes } from 'node:crypto';

/** A function slug: URL-safe, lower case, 1-63 characters. */
export const SLUG_PATTERN = '^[a-z0-9][a-z0-9_-]{0,62}$';

/** Makes a slug from a display name: "Send Email!" → "send-email"; never empty. */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '-')
    .replace(/^[-_]+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/g, '');
  return slug || `fn-${randomBytes(4).toString('hex')}`;
}
