import { createHash } from 'node:crypto';
import { AppError } from '../errors/index.js';
import { statement, type Queryable } from '../db/types.js';
import type { Credentials } from './credentials.js';
import { expiredToken, FUNCTION_ROLE, type AccessClaims, type TokenSigner } from './tokens.js';

/** Who is calling. Every route reads this; it is resolved once per request. */
export type Identity =
  | { kind: 'admin' }
  | {
      kind: 'user';
      userId: string;
      email: string;
      sessionId: string;
      claims: AccessClaims;
      /**
       * Whether the session was found live. False only when the route checks it itself, in
       * a query it runs anyway (`handlerChecksSession`: withCaller, the user read).
       */
      sessionChecked: boolean;
    }
  | { kind: 'anon' }
  /** A function calling back with the token the runtime gave it (x-plinth-function-token). */
  | { kind: 'function'; slug: string }
  | { kind: 'none' };

/** The credential headers of a request (lower-case names, as Node gives them). */
export interface CredentialHeaders {
  authorization?: string | string[];
  apikey?: string | string[];
  'x-api-key'?: string | string[];
}

/** Answers whether a session is still live (not signed out, user not deleted). */
export type SessionCheck = (sessionId: string, userId: string) => Promise<boolean>;

/** The condition of a live session, for ids $1 (session) and $2 (user) shifted by `at`. */
export function liveSessionSql(at = 0): string {
  return `exists (select 1 from auth.sessions where id = $${at + 1} and user_id = $${at + 2} and revoked_at is null and expires_at > now())`;
}

export function dbSessionCheck(db: Queryable): SessionCheck {
  // Asked on every request with a user token: prepared once per connection where it can be.
  const live = statement(`select ${liveSessionSql()} as live`);
  return async (sessionId, userId) => {
    const { rows } = await db.query<{ live: boolean }>(live, [sessionId, userId]);
    return rows[0]?.live === true;
  };
}

/**
 * The answer to a token whose session was signed out, expired or whose user is gone:
 * AUTH_UNAUTHORIZED, the 401 on which clients refresh (a refresh of an ended session then fails).
 */
export const sessionEnded = () =>
  new AppError('AUTH_UNAUTHORIZED', { message: 'The session of this access token has ended.' });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function single(v: string | string[] | undefined): string | undefined {
  if (Array.isArray(v)) {
    if (v.length > 1) throw new AppError('UNAUTHORIZED', { message: 'Send each credential header once.' });
    return v[0];
  }
  return v;
}

/** The credential a request presents: a Bearer token, else `x-api-key`, else `apikey`. */
export type PresentedCredential = { kind: 'bearer' | 'key'; value: string } | 'malformed' | null;

/** Reads the credential headers the one way every caller does (identity and rate limits). */
export function presentedCredential(headers: CredentialHeaders): PresentedCredential {
  const auth = single(headers.authorization);
  if (auth !== undefined) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    return m ? { kind: 'bearer', value: m[1]! } : 'malformed';
  }
  const key = single(headers['x-api-key']) ?? single(headers.apikey);
  return key === undefined ? null : { kind: 'key', value: key };
}

/** Verified tokens kept (the oldest goes first when full). */
export const VERIFIED_MAX = 10_000;

/** What a verified token says, kept until it expires: its identity, unchecked and checked. */
interface Verified {
  exp: number;
  /** An admin token's identity, or a user's with `sessionChecked: false`. */
  identity: Identity;
  /** A user's with `sessionChecked: true` (after the session check of this request). */
  checked: Identity;
}

/**
 * The one identity resolver. Dispatch by shape: `ik_…` admin key, `anon_…` anon key,
 * anything else in a Bearer header is a JWT. A Bearer credential wins over `apikey`.
 * A credential that is present but wrong is a 401, never downgraded to anon.
 */
export class IdentityResolver {
  // Tokens already verified, by the sha256 of the token (the token itself is not kept), until
  // they expire: a token is immutable, so its signature and claims need no check again (jose's
  // HMAC was ~15% of a read's CPU). The session's liveness is never kept: it is checked on
  // every request, as before (docs/decisions.md "Compiled reads and verified tokens, cached").
  private readonly verified = new Map<string, Verified>();

  constructor(
    private readonly credentials: Credentials,
    private readonly tokens: TokenSigner,
    private readonly sessionIsLive: SessionCheck,
  ) {}

  /**
   * `deferSessionCheck`: leave the session check of a user token to the route's handler
   * (see withCaller); the identity then says `sessionChecked: false`.
   */
  async resolve(headers: CredentialHeaders, opts: { deferSessionCheck?: boolean } = {}): Promise<Identity> {
    const c = presentedCredential(headers);
    if (c === 'malformed')
      throw new AppError('UNAUTHORIZED', { message: 'The Authorization header must be "Bearer <token>".' });
    if (c === null) return { kind: 'none' };
    const identity =
      c.kind === 'bearer' ? await this.fromBearer(c.value, opts.deferSessionCheck === true) : this.fromKey(c.value);
    // Only one credential decides, but every one sent must be valid: a wrong key next to a
    // right token is a 401 too (a present but wrong credential is never ignored).
    for (const key of [single(headers['x-api-key']), single(headers.apikey)]) {
      if (key !== undefined && !(c.kind === 'key' && key === c.value)) this.fromKey(key);
    }
    return identity;
  }

  /**
   * What `resolve(headers, { deferSessionCheck: true })` gives, when that is known without a
   * verification, a query or an error: the admin or anon key, or a token verified before and
   * not expired (a user's identity then says `sessionChecked: false`). Null for everything
   * else (no credential, a token not kept, a wrong or malformed credential, a function's
   * token), which only `resolve` answers. The front lane's records reads take this
   * (http/lanes/records.ts).
   */
  known(headers: CredentialHeaders): Identity | null {
    try {
      const c = presentedCredential(headers);
      if (c === null || c === 'malformed') return null;
      const isKey = c.kind === 'key' || c.value.startsWith('ik_') || c.value.startsWith('anon_');
      const identity = isKey ? this.fromKey(c.value) : this.kept(c.value);
      for (const key of [single(headers['x-api-key']), single(headers.apikey)]) {
        if (key !== undefined && !(c.kind === 'key' && key === c.value)) this.fromKey(key);
      }
      return identity;
    } catch {
      return null;
    }
  }

  /** A verified token's identity (session not checked), if it is kept and not expired. */
  private kept(token: string): Identity | null {
    const known = this.verified.get(tokenDigest(token));
    return known && known.exp > Date.now() / 1000 ? known.identity : null;
  }

  /**
   * For a user identity whose session check was deferred: throws AUTH_UNAUTHORIZED when the
   * session has ended. Anything else passes.
   */
  async assertSessionLive(identity: Identity): Promise<void> {
    if (identity.kind !== 'user' || identity.sessionChecked) return;
    if (!(await this.sessionIsLive(identity.sessionId, identity.userId))) throw sessionEnded();
  }

  private fromKey(key: string): Identity {
    if (key.startsWith('ik_') && this.credentials.isAdminKey(key)) return { kind: 'admin' };
    if (key.startsWith('anon_') && this.credentials.isAnonKey(key)) return { kind: 'anon' };
    throw new AppError('INVALID_API_KEY');
  }

  private async fromBearer(token: string, deferSessionCheck: boolean): Promise<Identity> {
    if (token.startsWith('ik_') || token.startsWith('anon_')) return this.fromKey(token);
    const digest = tokenDigest(token);
    let known = this.verified.get(digest);
    if (known && known.exp <= Date.now() / 1000) {
      this.verified.delete(digest);
      throw expiredToken();
    }
    if (!known) {
      if (unverifiedRole(token) === FUNCTION_ROLE)
        return { kind: 'function', slug: await this.tokens.verifyFunction(token) };
      known = verifiedIdentity(await this.tokens.verify(token));
      if (this.verified.size >= VERIFIED_MAX) this.verified.delete(this.verified.keys().next().value!);
      this.verified.set(digest, known);
    }
    const { identity } = known;
    if (identity.kind !== 'user' || deferSessionCheck) return identity;
    if (!(await this.sessionIsLive(identity.sessionId, identity.userId))) throw sessionEnded();
    return known.checked;
  }
}

const tokenDigest = (token: string) => createHash('sha256').update(token).digest('base64');

/** The identities of a verified token (INVALID_TOKEN if its ids are not uuids); frozen, as they are shared. */
function verifiedIdentity(claims: AccessClaims): Verified {
  if (claims.role === 'project_admin') {
    const admin: Identity = Object.freeze({ kind: 'admin' });
    return { exp: claims.exp, identity: admin, checked: admin };
  }
  if (!UUID.test(claims.sub) || !UUID.test(claims.sid)) throw new AppError('INVALID_TOKEN');
  const user = { kind: 'user' as const, userId: claims.sub, email: claims.email, sessionId: claims.sid, claims };
  return {
    exp: claims.exp,
    identity: Object.freeze({ ...user, sessionChecked: false }),
    checked: Object.freeze({ ...user, sessionChecked: true }),
  };
}

/** The role a JWT says it has, read before any check: only to pick the verification. */
function unverifiedRole(token: string): unknown {
  try {
    return (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { role?: unknown })
      .role;
  } catch {
    return undefined;
  }
}
