import { createHmac } from 'node:crypto';
import { safeEqual } from '../lib/crypto.js';

// Domain separation: the URL-signing key is derived from JWT_SECRET, never the secret itself.
// v2: tokens are bound to the object's version (v1 tokens signed only bucket and key).
const LABEL = 'plinth/storage/signed-url/v2';

/** The one object version a token is for: `version` changes whenever the object is written. */
export interface SignedObject {
  bucket: string;
  key: string;
  version: string;
}

/** HMAC-signed, expiring download tokens for private objects (`?token=<exp>.<sig>`). */
export class UrlSigner {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = createHmac('sha256', secret).update(LABEL).digest();
  }

  // Bucket names and keys cannot contain a newline, so the fields (version last) are unambiguous.
  private mac(object: SignedObject, exp: number): string {
    return createHmac('sha256', this.key)
      .update(`${exp}\n${object.bucket}\n${object.key}\n${object.version}`)
      .digest('base64url');
  }

  /** A token valid until `exp` (unix seconds) for this version of this object. */
  sign(object: SignedObject, exp: number): string {
    return `${exp}.${this.mac(object, exp)}`;
  }

  /** True when `token` was made by `sign` for this version of this object and has not expired. */
  verify(object: SignedObject, token: string, nowSeconds = Math.floor(Date.now() / 1000)): boolean {
    const m = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
    if (!m) return false;
    const exp = Number(m[1]);
    if (exp < nowSeconds) return false;
    return safeEqual(m[2]!, this.mac(object, exp));
  }
}
