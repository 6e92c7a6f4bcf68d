import { createHmac } from 'node:crypto';
import { safeEqual } from '../lib/crypto.js';

// Domain separation: the URL-signing key is derived from JWT_SECRET, never the secret itself.
const LABEL = 'plinth/storage/signed-url/v1';

/** HMAC-signed, expiring download tokens for private objects (`?token=<exp>.<sig>`). */
export class UrlSigner {
  readonly #key: Buffer;

  constructor(secret: string) {
    this.#key = createHmac('sha256', secret).update(LABEL).digest();
  }

  #mac(bucket: string, key: string, exp: number): string {
    return createHmac('sha256', this.#key).update(`${exp}\n${bucket}\n${key}`).digest('base64url');
  }

  /** A token valid until `exp` (unix seconds) for this one object. */
  sign(bucket: string, key: string, exp: number): string {
    return `${exp}.${this.#mac(bucket, key, exp)}`;
  }

  /** True when `token` was made by `sign` for this object and has not expired. */
  verify(bucket: string, key: string, token: string, nowSeconds = Math.floor(Date.now() / 1000)): boolean {
    const m = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
    if (!m) return false;
    const exp = Number(m[1]);
    if (exp < nowSeconds) return false;
    return safeEqual(m[2]!, this.#mac(bucket, key, exp));
  }
}
