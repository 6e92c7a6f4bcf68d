/** What a user row tells about how the user signs in. */
export interface ProviderFacts {
  password_hash: string | null;
}

/**
 * The sign-in providers of a user, as the InsForge SDK's user object lists them: `email`
 * for an account with a password. Other providers (OAuth) add their names here.
 */
export function providersOf(row: ProviderFacts): string[] {
  const providers: string[] = [];
  if (row.password_hash) providers.push('email');
  return providers;
}
