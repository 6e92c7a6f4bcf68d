import { generateSync } from 'otplib';
import { describe, expect, it } from 'vitest';
import { Totp } from './totp.js';

const SECRET = 'x'.repeat(40);

describe('Totp', () => {
  const totp = new Totp(SECRET);
  const at = (secret: string, offsetSteps: number) => {
    const base = Math.floor(Date.now() / 30_000) * 30 + 1;
    return {
      code: generateSync({ secret, epoch: base + offsetSteps * 30 }),
      step: Math.floor(base / 30) + offsetSteps,
    };
  };

  it('accepts codes of the previous, current and next step and names the step; refuses others', async () => {
    const secret = await totp.newSecret();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    for (const offset of [0, 1]) {
      const { code, step } = at(secret, offset);
      expect(await totp.check(secret, code)).toBe(step);
    }
    expect(await totp.check(secret, at(secret, 3).code)).toBeNull();
    expect(await totp.check(secret, at(secret, -3).code)).toBeNull();
    for (const bad of ['', '12345', '1234567', 'abcdef', '12 456']) expect(await totp.check(secret, bad)).toBeNull();
  });

  it('encrypts secrets with a random IV; another server secret cannot decrypt them', () => {
    const a = totp.encrypt('JBSWY3DPEHPK3PXPJBSWY3DP');
    expect(a).not.toBe(totp.encrypt('JBSWY3DPEHPK3PXPJBSWY3DP'));
    expect(a).not.toContain('JBSWY3DP');
    expect(totp.decrypt(a)).toBe('JBSWY3DPEHPK3PXPJBSWY3DP');
    expect(() => new Totp('y'.repeat(40)).decrypt(a)).toThrow();
    const [v, iv, body, tag] = a.split('.');
    const flipped = `${v}.${iv}.${body!.slice(0, -1)}${body!.endsWith('A') ? 'B' : 'A'}.${tag}`;
    expect(() => totp.decrypt(flipped)).toThrow();
  });

  it('makes ten distinct recovery codes whose HMAC ignores case and dashes, per user', () => {
    const codes = totp.newRecoveryCodes();
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const c of codes) expect(c).toMatch(/^[a-z2-7]{5}-[a-z2-7]{5}$/);
    const c = codes[0]!;
    expect(totp.recoveryHmac('u1', c.toUpperCase().replace('-', ''))).toBe(totp.recoveryHmac('u1', c));
    expect(totp.recoveryHmac('u2', c)).not.toBe(totp.recoveryHmac('u1', c));
  });

  it('writes an otpauth URI and an SVG QR code', async () => {
    const uri = await totp.uri('JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', 'Acme', 'ann@example.com');
    expect(uri).toMatch(/^otpauth:\/\/totp\/Acme:ann%40example\.com\?/);
    expect(uri).toContain('issuer=Acme');
    const svg = await totp.qrSvg(uri);
    expect(svg.startsWith('<svg')).toBe(true);
  });
});
