/** What a user row tells about how the user signs in. */
export interface ProviderFacts {
  password_hash: string;
  /** The providers of the user's linked identities (OAuth / OpenID Connect), first linked first. */
  identity_providers?: string[] | null;
}

/** The password_hash of an account made by a provider sign-in: never matches any password. */
export const NO_PASSWORD = '!none';

/** Whether the account has a usable password (a real argon2 hash). */
export const hasPassword = (row: Pick<ProviderFacts, 'password_hash'>): boolean => row.password_hash.startsWith('$');

/**
 * The sign-in providers of a user, as the InsForge SDK's user object lists them: `email`
 * for an account with a password, then each linked provider once.
 */
export function providersOf(row: ProviderFacts): string[] {
  return [...(hasPassword(row) ? ['email'] : []), ...(row.identity_providers ?? [])];
}
