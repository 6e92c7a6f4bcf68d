import { createSecretKey, type KeyObject } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { AppError } from '../errors/index.js';

export type TokenRole = 'authenticated' | 'project_admin';

/** Authenticator assurance level: aal1 after one factor, aal2 after a second (TOTP). */
export type Aal = 'aal1' | 'aal2';

/** One way the user proved who they are, and when (Supabase's `amr` entries). */
export interface AmrEntry {
  method: string;
  timestamp: number;
}

/** The claims of a Plinth access token. */
export interface AccessClaims {
  sub: string;
  email: string;
  role: TokenRole;
  sid: string;
  /** Absent in tokens signed before MFA existed: those count as aal1. */
  aal?: Aal;
  amr?: AmrEntry[];
  is_anonymous?: boolean;
  iat: number;
  exp: number;
}

/** What a session's access token says about how the user signed in. */
export interface Assurance {
  aal: Aal;
  amr: AmrEntry[];
  isAnonymous: boolean;
}

const ISSUER = 'plinth';
/** The role claim of a function's token (signFunction). */
export const FUNCTION_ROLE = 'function';

/** HS256 access tokens bound to one secret. */
export class TokenSigner {
  // A KeyObject made once: handing jose raw bytes makes it import the key on every call.
  private readonly key: KeyObject;

  constructor(
    secret: string,
    readonly ttlSeconds: number,
  ) {
    this.key = createSecretKey(Buffer.from(secret, 'utf8'));
  }

  async sign(
    claims: { sub: string; email: string; role: TokenRole; sid: string } & Partial<Assurance>,
  ): Promise<string> {
    const extra =
      claims.aal === undefined
        ? {}
        : { aal: claims.aal, amr: claims.amr ?? [], is_anonymous: claims.isAnonymous === true };
    return new SignJWT({ email: claims.email, role: claims.role, sid: claims.sid, ...extra })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(claims.sub)
      .setIssuer(ISSUER)
      .setIssuedAt()
      .setExpirationTime(`${this.ttlSeconds}s`)
      .sign(this.key);
  }

  /**
   * Verifies signature (HS256 only: `alg: none` and others are refused), expiry and shape.
   * Every call checks (IdentityResolver keeps what requests verified).
   */
  async verify(token: string): Promise<AccessClaims> {
    return this.check(token);
  }

  /**
   * A function's own credential: a short-lived token with `role: "function"` and the slug in
   * `sub` (`function:<slug>`). Only routes that say so take it (POST /api/email/send-raw); it
   * is never a user's or an admin's token (verify() refuses it).
   */
  async signFunction(slug: string, ttlSeconds: number): Promise<string> {
    return new SignJWT({ role: FUNCTION_ROLE })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(`function:${slug}`)
      .setIssuer(ISSUER)
      .setIssuedAt()
      .setExpirationTime(`${ttlSeconds}s`)
      .sign(this.key);
  }

  /** The slug of an authentic, unexpired function token; INVALID_TOKEN / AUTH_UNAUTHORIZED otherwise. */
  async verifyFunction(token: string): Promise<string> {
    if (!isCanonicalJwt(token)) throw new AppError('INVALID_TOKEN', { message: 'The access token is invalid.' });
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: ['HS256'], issuer: ISSUER });
      const slug =
        typeof payload.sub === 'string' && payload.role === FUNCTION_ROLE
          ? /^function:(.+)$/.exec(payload.sub)?.[1]
          : undefined;
      if (!slug) throw new AppError('INVALID_TOKEN', { message: 'The function token is missing required claims.' });
      return slug;
    } catch (err) {
      if (err instanceof AppError) throw err;
      if (err instanceof joseErrors.JWTExpired) throw expiredToken(err);
      throw new AppError('INVALID_TOKEN', { message: 'The access token is invalid.', cause: err });
    }
  }

  /**
   * The claims of an authentic token even if it has expired (up to a year ago): for signing
   * out with the last token a client holds. Anything not signed by this server is refused.
   */
  async verifyIgnoringExpiry(token: string): Promise<AccessClaims> {
    return this.check(token, 366 * 86_400);
  }

  private async check(token: string, clockTolerance = 0): Promise<AccessClaims> {
    // One token, one spelling: base64url without padding and without stray bits in a segment's
    // last character (jose decodes `=` padding and such variants to the same bytes).
    if (!isCanonicalJwt(token)) throw new AppError('INVALID_TOKEN', { message: 'The access token is invalid.' });
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: ['HS256'], issuer: ISSUER, clockTolerance });
      const { sub, email, role, sid, iat, exp, aal, amr, is_anonymous } = payload as Record<string, unknown>;
      if (
        typeof sub !== 'string' ||
        typeof email !== 'string' ||
        typeof sid !== 'string' ||
        (role !== 'authenticated' && role !== 'project_admin') ||
        typeof iat !== 'number' ||
        typeof exp !== 'number' ||
        (aal !== undefined && aal !== 'aal1' && aal !== 'aal2') ||
        (amr !== undefined && !Array.isArray(amr)) ||
        (is_anonymous !== undefined && typeof is_anonymous !== 'boolean')
      ) {
        throw new AppError('INVALID_TOKEN', { message: 'The access token is missing required claims.' });
      }
      const assurance =
        aal === undefined ? {} : { aal: aal as Aal, amr: amr as AmrEntry[], is_anonymous: is_anonymous === true };
      return Object.freeze({ sub, email, role, sid, ...assurance, iat, exp });
    } catch (err) {
      if (err instanceof AppError) throw err;
      // An expired token is AUTH_UNAUTHORIZED, the code on which clients refresh and retry;
      // a forged or garbled one stays INVALID_TOKEN (refreshing would not help).
      if (err instanceof joseErrors.JWTExpired) throw expiredToken(err);
      throw new AppError('INVALID_TOKEN', { message: 'The access token is invalid.', cause: err });
    }
  }
}

/**
 * Each function's own token (role "function", 10 minutes), signed once and reused while it
 * has more than 5 minutes left: a call then always holds one valid for at least 5 minutes.
 */
export function functionCredentials(tokens: TokenSigner): (slug: string) => Promise<string> {
  const made = new Map<string, { token: string; until: number }>();
  return async (slug) => {
    const known = made.get(slug);
    if (known && known.until > Date.now()) return known.token;
    const token = await tokens.signFunction(slug, 600);
    if (made.size > 10_000) made.clear();
    made.set(slug, { token, until: Date.now() + 300_000 });
    return token;
  };
}

/** AUTH_UNAUTHORIZED for an expired token: the code on which clients refresh and retry. */
export const expiredToken = (cause?: unknown) =>
  new AppError('AUTH_UNAUTHORIZED', { message: 'The access token has expired.', cause });

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** Three base64url segments, each exactly as a base64url encoder would write its bytes. */
function isCanonicalJwt(token: string): boolean {
  return (
    JWT_SHAPE.test(token) &&
    token.split('.').every((part) => Buffer.from(part, 'base64url').toString('base64url') === part)
  );
}
