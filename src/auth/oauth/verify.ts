import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';
import { AppError } from '../../errors/index.js';
import type { Queryable } from '../../db/types.js';
import { safeEqual, sha256Hex } from '../../lib/crypto.js';
import { unavailable } from './upstream.js';

export type KeySet = ReturnType<typeof createRemoteJWKSet>;

/** A JWKS fetched from the provider's jwks_uri, cached and refetched for unknown key ids. */
export function remoteKeySet(jwksUri: string): KeySet {
  return createRemoteJWKSet(new URL(jwksUri), {
    timeoutDuration: 10_000,
    cooldownDuration: 30_000,
    cacheMaxAge: 10 * 60_000,
  });
}

export interface VerifyOptions {
  issuer: string;
  /** Accepted `aud` values: the client id, and any extra native client ids. */
  audiences: string[];
  /** The nonce this sign-in expects; null when the caller sent none. */
  nonce: string | null;
  /** Algorithms the provider signs with (never "none" or HMAC: the key is the provider's). */
  algorithms: string[];
}

/** Seconds of clock skew allowed on exp, nbf and iat. */
const CLOCK_SKEW = 60;

const SAFE_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

/** The asymmetric algorithms among those the provider announces (RS256 when it announces none). */
export function allowedAlgorithms(announced: unknown): string[] {
  const list = Array.isArray(announced) ? announced.filter((a): a is string => SAFE_ALGS.includes(a)) : [];
  return list.length ? list : ['RS256'];
}

function invalid(message: string, cause?: unknown): AppError {
  return new AppError('INVALID_ID_TOKEN', { message: `The ID token is not valid: ${message}`, cause });
}

/**
 * Verifies an ID token: signature by the provider's JWKS, issuer, audience, expiry and issue
 * time (60 s of clock skew: an `iat` further in the future is refused), and the nonce. A nonce is compared with the token's `nonce` claim as sent or
 * as its SHA-256 hex (Apple and some native SDKs put the hash in the token). A token that
 * carries a nonce must be presented with it.
 */
export async function verifyIdToken(
  token: string,
  keys: KeySet,
  opts: VerifyOptions,
): Promise<JWTPayload & { sub: string }> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, keys, {
      issuer: opts.issuer,
      audience: opts.audiences,
      algorithms: opts.algorithms,
      clockTolerance: CLOCK_SKEW,
      requiredClaims: ['sub', 'exp', 'iat'],
    }));
  } catch (err) {
    throw explain(err);
  }
  // jose checks iat only against maxTokenAge; a token "issued" in the future is a forged or
  // pre-minted one (or a provider with a broken clock).
  if ((payload.iat as number) > Date.now() / 1000 + CLOCK_SKEW)
    throw invalid('it was issued in the future (its iat is over 60 s ahead of this server).');
  const claimed = typeof payload.nonce === 'string' ? payload.nonce : null;
  if (opts.nonce !== null) {
    if (claimed === null || !(safeEqual(claimed, opts.nonce) || safeEqual(claimed, sha256Hex(opts.nonce)))) {
      throw invalid('its nonce does not match the one of this sign-in (a replayed or injected token).');
    }
  } else if (claimed !== null) {
    throw invalid('it carries a nonce; send the same nonce with it.');
  }
  return payload as JWTPayload & { sub: string };
}

function explain(err: unknown): AppError {
  if (err instanceof errors.JWTExpired) return invalid('it has expired.', err);
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'aud') return invalid('it was issued for another client (audience).', err);
    if (err.claim === 'iss') return invalid('it was issued by another issuer.', err);
    if (err.claim === 'nbf' || err.claim === 'iat') return invalid('it is not valid yet.', err);
    return invalid(`its "${err.claim}" claim is missing or wrong.`, err);
  }
  if (err instanceof errors.JWSSignatureVerificationFailed || err instanceof errors.JWKSNoMatchingKey) {
    return invalid("its signature does not match the provider's keys.", err);
  }
  if (err instanceof errors.JOSEAlgNotAllowed)
    return invalid('it is signed with an algorithm the provider does not use.', err);
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid) {
    return unavailable('its signing keys (JWKS) could not be fetched.', err);
  }
  if (err instanceof errors.JOSEError) return invalid('it is malformed.', err);
  // A network failure while fetching the JWKS.
  return unavailable('its signing keys (JWKS) could not be fetched.', err);
}

/**
 * Spends a verified ID token: true the first time, false when it was already exchanged (on
 * any instance) within its lifetime. Keyed by the SHA-256 of its decoded claims, so a token
 * re-encoded with another signature encoding is still the same token; nonce-less tokens too.
 */
export async function spendIdToken(db: Queryable, payload: JWTPayload): Promise<boolean> {
  const hash = sha256Hex(JSON.stringify(payload));
  const { rows } = await db.query(
    `insert into auth.oauth_spent_id_tokens (token_hash, expires_at) values ($1, to_timestamp($2))
     on conflict (token_hash) do nothing returning 1`,
    [hash, (payload.exp as number) + CLOCK_SKEW],
  );
  return rows.length === 1;
}

/** Deletes the spent ID tokens that have expired (they could not be replayed anyway). */
export async function pruneSpentIdTokens(db: Queryable): Promise<void> {
  await db.query('delete from auth.oauth_spent_id_tokens where expires_at < now()');
}
