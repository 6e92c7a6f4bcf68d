import type { AuthContext } from './context.js';
import type { SignInResult } from './signin.js';

/**
 * Hears the sign-ins of the auth services (password, code, second factor, magic link,
 * anonymous): the log store's audit (auth/audit.ts) is one. A hook never changes the answer.
 */
export interface SignInHooks {
  /** A first factor that passed (a session, or a challenge for the second factor), or a second factor that did. */
  onSignIn(r: SignInResult, method: string, ctx: AuthContext): void;
  /** A sign-in refused (thrown on after the hook). */
  onFailed(err: unknown, fields: { method: string; ip: string }): void;
}

/** Runs a sign-in and tells `hooks` how it ended. */
export async function heard<T extends SignInResult>(
  hooks: SignInHooks | undefined,
  method: string,
  ctx: AuthContext,
  signIn: () => Promise<T>,
): Promise<T> {
  let r: T;
  try {
    r = await signIn();
  } catch (err) {
    hooks?.onFailed(err, { method, ip: ctx.ip });
    throw err;
  }
  hooks?.onSignIn(r, method, ctx);
  return r;
}
