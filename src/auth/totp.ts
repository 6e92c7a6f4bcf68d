import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

// otplib and qrcode are imported on the first MFA enrolment or check: a start does not load them (issue #38).
const otp = () => import('otplib');

/** Time step of the codes (RFC 6238 and every authenticator app: 30 s, 6 digits, SHA-1). */
export const TOTP_PERIOD = 30;

/**
 * TOTP for MFA, by otplib: secrets (160 bits, base32), `otpauth://` URIs, QR codes as SVG,
 * and checks within ±1 time step. Secrets are stored encrypted (AES-256-GCM under a key
 * derived from the server secret): a database dump alone does not give them away.
 */
export class Totp {
  private readonly key: Buffer;
  private readonly recoveryKey: Buffer;

  constructor(secret: string) {
    this.key = Buffer.from(hkdfSync('sha256', secret, 'plinth', 'mfa-totp-secret', 32));
    this.recoveryKey = Buffer.from(hkdfSync('sha256', secret, 'plinth', 'mfa-recovery-code', 32));
  }

  async newSecret(): Promise<string> {
    return (await otp()).generateSecret({ length: 20 });
  }

  async uri(secret: string, issuer: string, label: string): Promise<string> {
    return (await otp()).generateURI({ issuer, label, secret });
  }

  /** The QR code of an `otpauth://` URI as an SVG document. */
  async qrSvg(uri: string): Promise<string> {
    const { default: QRCode } = await import('qrcode');
    return QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  }

  /**
   * The time step of a right code (now, one step before or one after), or null. The caller
   * accepts it only for a step later than the last one used, so each code works once.
   */
  async check(secret: string, code: string): Promise<number | null> {
    if (!/^[0-9]{6}$/.test(code)) return null;
    const r = await (await otp()).verify({ secret, token: code, epochTolerance: TOTP_PERIOD });
    // The TOTP strategy's answer carries the time step (the HOTP one, never used here, does not).
    return r.valid && 'timeStep' in r ? r.timeStep : null;
  }

  encrypt(plain: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return `v1.${iv.toString('base64url')}.${body.toString('base64url')}.${c.getAuthTag().toString('base64url')}`;
  }

  decrypt(stored: string): string {
    const [, iv, body, tag] = stored.split('.');
    const d = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv!, 'base64url'));
    d.setAuthTag(Buffer.from(tag!, 'base64url'));
    return Buffer.concat([d.update(Buffer.from(body!, 'base64url')), d.final()]).toString('utf8');
  }

  /** Ten recovery codes, `xxxxx-xxxxx` (50 bits each, lower-case base32). */
  newRecoveryCodes(): string[] {
    const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
    return Array.from({ length: 10 }, () => {
      const chars = [...randomBytes(10)].map((b) => alphabet[b & 31]).join('');
      return `${chars.slice(0, 5)}-${chars.slice(5)}`;
    });
  }

  /** How a recovery code is stored: HMAC keyed with the server secret (normalised first). */
  recoveryHmac(userId: string, code: string): string {
    const normal = code
      .trim()
      .toLowerCase()
      .replace(/[^a-z2-7]/g, '');
    return createHmac('sha256', this.recoveryKey).update(`${userId}:${normal}`).digest('hex');
  }
}
