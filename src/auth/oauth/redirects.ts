import { AppError } from '../../errors/index.js';

/**
 * Checks an app redirect URL against AUTH_REDIRECT_URLS and returns it normalised. An entry
 * matches the same origin (scheme, host, port) and exactly the same path; an entry ending in
 * `*` matches any path that starts with the entry's path. The redirect may carry a query
 * (kept), never a fragment or credentials.
 */
export function isRedirectAllowed(allowList: readonly string[], given: string): string {
  let u: URL | null = null;
  try {
    u = new URL(given);
  } catch {
    u = null;
  }
  const ok =
    u !== null &&
    ['http:', 'https:'].includes(u.protocol) &&
    !u.hash &&
    !u.username &&
    !u.password &&
    allowList.some((entry) => {
      const wildcard = entry.endsWith('*');
      const e = new URL(wildcard ? entry.slice(0, -1) : entry);
      return e.origin === u!.origin && (wildcard ? u!.pathname.startsWith(e.pathname) : u!.pathname === e.pathname);
    });
  if (!ok) {
    throw new AppError('REDIRECT_NOT_ALLOWED', {
      message: allowList.length
        ? `The redirect URL "${given.slice(0, 200)}" is not in AUTH_REDIRECT_URLS.`
        : 'No redirect URL is allowed: AUTH_REDIRECT_URLS is not set on this server.',
    });
  }
  return u!.toString();
}
