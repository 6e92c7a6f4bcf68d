import { Type } from '@fastify/type-provider-typebox';

/** name and avatar_url by convention; other keys a user set through PATCH /api/auth/profiles/current. */
export const Profile = Type.Object(
  { name: Type.Optional(Type.String()), avatar_url: Type.Optional(Type.String()) },
  { additionalProperties: true },
);

/** An MFA factor as users and admins see it (never its secret). */
export function FactorSchema() {
  return Type.Object({
    id: Type.String({ format: 'uuid' }),
    type: Type.Literal('totp'),
    friendlyName: Type.Union([Type.String(), Type.Null()]),
    status: Type.Union([Type.Literal('unverified'), Type.Literal('verified')]),
    createdAt: Type.String(),
  });
}

export const UserSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  email: Type.String(),
  emailVerified: Type.Boolean(),
  profile: Profile,
  providers: Type.Array(Type.String(), { description: '"email" for a password account' }),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
  metadata: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  isAnonymous: Type.Boolean({ description: 'Signed in anonymously (no email: `email` is "")' }),
  factors: Type.Array(FactorSchema()),
  bannedUntil: Type.Union([Type.String(), Type.Null()], {
    description: 'Banned until this time (ISO), "infinity" until the ban is lifted; null when not banned',
  }),
  banReason: Type.Union([Type.String(), Type.Null()], { description: "The admin's note on the ban in force" }),
});

// Lengths bound the work done on hostile input (argon2 over a huge string, huge look-ups).
export const Email = Type.String({
  minLength: 1,
  maxLength: 320,
  description: 'Trimmed, NFKC-normalised and lower-cased.',
});
export const NewPassword = Type.String({ minLength: 8, maxLength: 128, description: '8 to 128 characters.' });
/** A password being checked: any length a real one could have, and a bit more. */
export const GivenPassword = Type.String({ minLength: 1, maxLength: 1024 });
export const Code = Type.String({ pattern: '^[0-9]{6}$', description: 'The 6-digit code from the email.' });
export const RefreshToken = Type.String({ minLength: 1, maxLength: 4096 });

export const Success = Type.Object({ success: Type.Boolean(), message: Type.String() });

export const SignedIn = Type.Object({
  user: UserSchema,
  accessToken: Type.String(),
  refreshToken: Type.String(),
});

/** A first factor succeeded for a user with an active MFA factor: the challenge, no session. */
export const MfaRequired = Type.Object({
  mfaRequired: Type.Literal(true),
  challenge: Type.Object({
    token: Type.String(),
    expiresAt: Type.String({ format: 'date-time' }),
    factors: Type.Array(
      Type.Object({
        id: Type.String(),
        type: Type.Literal('totp'),
        friendlyName: Type.Union([Type.String(), Type.Null()]),
      }),
    ),
  }),
});

/** The answer of a first-factor sign-in: a session, or an MFA challenge. */
export const SignInAnswer = Type.Union([SignedIn, MfaRequired]);

/**
 * Route options of the auth endpoints that need no credential: auth bodies are small, so
 * anything over 16 KiB is refused before it is parsed.
 */
export const PUBLIC_AUTH_ROUTE = { bodyLimit: 16 * 1024, config: { access: 'public' as const } };

/**
 * PUBLIC_AUTH_ROUTE for the paths the InsForge SDK calls with its last access token along
 * (sign-up, sign-in, the emailed-code flows): an expired or ended token is ignored there, so a
 * client whose session lapsed can still sign in. A forged token or wrong key is still a 401.
 */
export const SDK_AUTH_ROUTE = { bodyLimit: 16 * 1024, config: { access: 'public' as const, ignoreEndedToken: true } };
