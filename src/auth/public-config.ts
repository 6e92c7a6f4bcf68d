/** The auth settings a sign-in form needs, as GET /api/auth/public-config and GET /api/metadata give them (InsForge's names). */
export function publicAuthConfig(
  oauth: { publicConfig(): { oAuthProviders: string[]; customOAuthProviders: string[] } },
  requireEmailVerification: boolean,
) {
  return {
    ...oauth.publicConfig(),
    requireEmailVerification,
    passwordMinLength: 8,
    requireNumber: false,
    requireLowercase: false,
    requireUppercase: false,
    requireSpecialChar: false,
    verifyEmailMethod: 'code',
    resetPasswordMethod: 'code',
    disableSignup: false,
  };
}
