import type { ErrorSpec } from '../spec.js';

/** Auth: sessions, MFA, anonymous and provider sign-in. */
export const AUTH_ERRORS = {
  // auth
  INVALID_CREDENTIALS: {
    status: 401,
    message: 'Invalid email or password.',
    nextActions: 'Check the email and password, or reset the password.',
  },
  EMAIL_NOT_VERIFIED: {
    status: 403,
    message: 'The email address is not verified yet.',
    nextActions:
      'Enter the code sent by email at POST /api/auth/email/verify, or ask for a new one at POST /api/auth/email/send-verification.',
  },
  INVALID_CODE: {
    status: 400,
    message: 'The code is wrong or has expired.',
    nextActions: 'Ask for a new code and try again.',
  },
  USER_BANNED: {
    status: 403,
    message: 'This account is banned.',
    nextActions: "Contact the app's administrator to have the ban lifted.",
  },
  USER_NOT_FOUND: {
    status: 404,
    message: 'No such user.',
    nextActions: 'Check the user id; GET /api/auth/users lists users.',
  },
  INVALID_REFRESH_TOKEN: {
    status: 401,
    message: 'The refresh token is invalid, expired or already used.',
    nextActions: 'Sign in again.',
  },
  // auth: MFA, anonymous sign-in
  MFA_FACTOR_NOT_FOUND: {
    status: 404,
    message: 'No such MFA factor for this user.',
    nextActions: 'List your factors with GET /api/auth/mfa/factors (a challenge takes only verified ones).',
  },
  MFA_FACTOR_LIMIT: {
    status: 409,
    message: 'This account has as many MFA factors as it may.',
    nextActions: 'Remove a factor with DELETE /api/auth/mfa/factors/{id} first.',
  },
  AAL2_REQUIRED: {
    status: 403,
    message: 'This needs a session verified with a second factor (aal2).',
    nextActions:
      'Verify a code of your factor with POST /api/auth/mfa/factors/{id}/verify, then retry with the new access token.',
  },
  ANONYMOUS_SIGNIN_DISABLED: {
    status: 403,
    message: 'Anonymous sign-in is turned off on this server.',
    nextActions: 'Sign up with an email and password, or ask the operator to set AUTH_ANONYMOUS_SIGNIN=true.',
  },
  NOT_ANONYMOUS: {
    status: 409,
    message: 'This account is not anonymous; it already has an email.',
    nextActions: 'Change the password with the reset-password flow instead.',
  },
  // auth: OAuth / OpenID Connect sign-in
  OAUTH_PROVIDER_NOT_FOUND: {
    status: 404,
    message: 'No such sign-in provider is configured on this server.',
    nextActions:
      'Use a provider listed by GET /api/auth/public-config, or ask the operator to add it to OAUTH_PROVIDERS.',
  },
  REDIRECT_NOT_ALLOWED: {
    status: 400,
    message: 'This redirect URL is not allowed.',
    nextActions:
      'Use a redirect URL listed in AUTH_REDIRECT_URLS, or ask the operator to add it (exact origin and path; a trailing * allows a path prefix).',
  },
  INVALID_OAUTH_STATE: {
    status: 400,
    message: 'This sign-in link is invalid, expired, already used, or was started in another browser.',
    nextActions: 'Start the sign-in again from the app, in this browser (it needs cookies).',
  },
  INVALID_OAUTH_CODE: {
    status: 400,
    message: 'The sign-in code is invalid, expired or already used, or the code verifier does not match.',
    nextActions:
      'Start the sign-in again; send the code from the redirect once, with the code_verifier whose S256 challenge started it.',
  },
  INVALID_ID_TOKEN: {
    status: 401,
    message: 'The ID token is not valid.',
    nextActions:
      'Sign in with the provider again and send the fresh ID token; check that the provider and client id match the server configuration.',
  },
  OAUTH_PROVIDER_REJECTED: {
    status: 400,
    message: 'The sign-in provider refused the request.',
    nextActions:
      'Start the sign-in again; if it keeps failing, the operator should check the client id, secret and the callback URL registered at the provider.',
  },
  OAUTH_PROVIDER_UNAVAILABLE: {
    status: 502,
    message: 'The sign-in provider failed or could not be reached.',
    nextActions:
      'Try again shortly; if it keeps failing, the operator should check the provider issuer URL and its status.',
  },
  OAUTH_EMAIL_NOT_VERIFIED: {
    status: 409,
    message:
      'An account with this email exists, and the provider has not verified that the email is yours, so the accounts were not linked.',
    nextActions:
      'Sign in to the existing account with its password (or reset it), or verify the email at the provider and try again.',
  },
  OAUTH_EMAIL_MISSING: {
    status: 400,
    message: 'The provider did not share an email address.',
    nextActions:
      'Allow the app to see your email at the provider (a public or verified primary email on GitHub), then sign in again.',
  },
  OAUTH_EMAIL_INVALID: {
    status: 400,
    message:
      "The provider's email address is not a plain address this server accepts (full-width or look-alike characters, spaces).",
    nextActions:
      'Use an account at the provider whose email is a plain address such as name@example.com, or sign up with email and password.',
  },
  OAUTH_LINK_NEEDS_CONSENT: {
    status: 409,
    message:
      'An account with this email has a password and its email was never verified, so the provider was not linked and the password was kept.',
    nextActions:
      "Sign in with the account's password and verify the email, or reset the password with the emailed code (POST /api/auth/email/send-reset-password), then sign in with the provider again.",
  },
  IDENTITY_NOT_FOUND: {
    status: 404,
    message: 'No such identity for this user.',
    nextActions: 'List your identities with GET /api/auth/identities.',
  },
  LAST_SIGN_IN_METHOD: {
    status: 409,
    message: 'This is the last way to sign in to the account; it cannot be removed.',
    nextActions:
      'Link another provider or set a password first (POST /api/auth/email/send-reset-password), then remove this one.',
  },
} as const satisfies Record<string, ErrorSpec>;
