import { createHash, randomBytes } from 'node:crypto';
import type { Queryable } from '../../db/types.js';
import { safeEqual, sha256Hex } from '../../lib/crypto.js';

/** A sign-in must come back from the provider within this time. */
export const STATE_TTL_SECONDS = 600;
/** The app must trade Plinth's code within this time (providers' codes live about as long). */
export const CODE_TTL_SECONDS = 300;

/** 256 random bits, base64url (43 characters). */
export const randomToken = (): string => randomBytes(32).toString('base64url');

/** The PKCE S256 challenge of a verifier (RFC 7636 4.2). */
export const s256 = (verifier: string): string => createHash('sha256').update(verifier).digest('base64url');

/** RFC 7636 4.1: 43-128 characters of [A-Z a-z 0-9 - . _ ~]. */
export const PKCE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
/** A base64url SHA-256: 43 characters. */
export const PKCE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export interface NewFlow {
  provider: string;
  redirectUri: string;
  callbackUrl: string;
  codeChallenge: string;
}

/** What a started flow hands out: the state for the provider, the browser cookie, PKCE and nonce. */
export interface StartedFlow {
  state: string;
  browserSecret: string;
  providerVerifier: string;
  nonce: string;
}

/** Deletes flows that ended over an hour ago (kept that long only to recognise replays). */
export async function pruneFlows(db: Queryable): Promise<void> {
  await db.query(
    `delete from auth.oauth_flows where expires_at < now() - interval '1 hour' and (code_expires_at is null or code_expires_at < now() - interval '1 hour')`,
  );
}

/** Stores a new flow; only hashes of the state and browser secret are kept. */
export async function createFlow(db: Queryable, f: NewFlow): Promise<StartedFlow> {
  const started: StartedFlow = {
    state: randomToken(),
    browserSecret: randomToken(),
    providerVerifier: randomToken(),
    nonce: randomToken(),
  };
  await db.query(
    `insert into auth.oauth_flows (state_hash, provider, redirect_uri, callback_url, code_challenge, provider_verifier, nonce, browser_hash, expires_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, now() + make_interval(secs => $9))`,
    [
      sha256Hex(started.state),
      f.provider,
      f.redirectUri,
      f.callbackUrl,
      f.codeChallenge,
      started.providerVerifier,
      started.nonce,
      sha256Hex(started.browserSecret),
      STATE_TTL_SECONDS,
    ],
  );
  return started;
}

export interface FlowRow {
  provider: string;
  redirect_uri: string;
  callback_url: string;
  code_challenge: string;
  provider_verifier: string;
  nonce: string;
  browser_hash: string;
  provider_code: string | null;
}

const FLOW_COLUMNS =
  'provider, redirect_uri, callback_url, code_challenge, provider_verifier, nonce, browser_hash, provider_code';

/**
 * Spends a state at the callback: one statement claims it, so it works once, before it
 * expires, for its provider only. The browser cookie is checked after the claim, so a
 * callback opened in another browser also burns the state.
 */
export async function claimState(
  db: Queryable,
  c: { state: string; provider: string; browserSecret: string | null },
): Promise<{ row: FlowRow } | { reason: 'unknown' | 'browser' }> {
  const { rows } = await db.query<FlowRow>(
    `update auth.oauth_flows set used_at = now()
     where state_hash = $1 and provider = $2 and used_at is null and expires_at > now()
     returning ${FLOW_COLUMNS}`,
    [sha256Hex(c.state), c.provider],
  );
  const row = rows[0];
  if (!row) return { reason: 'unknown' };
  if (c.browserSecret === null || !safeEqual(sha256Hex(c.browserSecret), row.browser_hash))
    return { reason: 'browser' };
  return { row };
}

/** Records the provider's code on a claimed flow and returns Plinth's one-time code for the app. */
export async function issueAppCode(db: Queryable, state: string, providerCode: string): Promise<string> {
  const code = randomToken();
  await db.query(
    `update auth.oauth_flows set provider_code = $2, code_hash = $3, code_expires_at = now() + make_interval(secs => $4)
     where state_hash = $1`,
    [sha256Hex(state), providerCode, sha256Hex(code), CODE_TTL_SECONDS],
  );
  return code;
}

/**
 * Spends Plinth's code once. The code is burnt even when the verifier is wrong, so a stolen
 * code cannot be tried against many verifiers. The provider's code is wiped from the row.
 */
export async function claimAppCode(db: Queryable, code: string, verifier: string): Promise<FlowRow | null> {
  const { rows } = await db.query<FlowRow>(
    `update auth.oauth_flows f set exchanged_at = now(), provider_code = null
     from (select state_hash, provider_code as given from auth.oauth_flows where code_hash = $1 for update) old
     where f.state_hash = old.state_hash and f.exchanged_at is null and f.code_expires_at > now()
     returning ${FLOW_COLUMNS.replace('provider_code', 'old.given as provider_code')}`,
    [sha256Hex(code)],
  );
  const row = rows[0];
  if (!row || !PKCE_VERIFIER.test(verifier) || !safeEqual(s256(verifier), row.code_challenge)) return null;
  return row;
}
