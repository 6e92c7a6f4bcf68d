import { Type } from '@fastify/type-provider-typebox';

export const UserSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    email: Type.String(),
    emailVerified: Type.Boolean(),
    profile: Type.Object({ name: Type.Optional(Type.String()), avatar_url: Type.Optional(Type.String()) }),
    createdAt: Type.String({ format: 'date-time' }),
  },
);

// Lengths bound the work done on hostile input (argon2 over a huge string, huge look-ups).
export const Email = Type.String({ minLength: 1, maxLength: 320, description: 'Trimmed, NFKC-normalised and lower-cased.' });
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

/**
 * Route options of the auth endpoints that need no credential: auth bodies are small, so
 * anything over 16 KiB is refused before it is parsed.
 */
export const PUBLIC_AUTH_ROUTE = { bodyLimit: 16 * 1024, config: { access: 'public' as const } };
