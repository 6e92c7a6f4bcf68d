import { describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { TokenSigner } from './tokens.js';

const SECRET = 'a-test-secret-that-is-long-enough-for-hs256-000000';
const claims = {
  sub: '00000000-0000-4000-8000-000000000001',
  email: 'a@example.com',
  role: 'authenticated' as const,
  sid: '00000000-0000-4000-8000-000000000002',
};

describe('TokenSigner', () => {
  it('verifies its own tokens, again on every call, and refuses them once expired', async () => {
    // Two seconds: exp is in whole seconds, so a 1 s token signed late in a second could
    // already be expired at its first check.
    const signer = new TokenSigner(SECRET, 2);
    const token = await signer.sign(claims);
    const first = await signer.verify(token);
    expect(first).toMatchObject(claims);
    expect(await signer.verify(token)).toEqual(first);
    await new Promise((r) => setTimeout(r, (first.exp - Date.now() / 1000) * 1000 + 50));
    await expect(signer.verify(token)).rejects.toMatchObject({
      code: 'AUTH_UNAUTHORIZED',
      message: 'The access token has expired.',
    });
    await expect(signer.verify(token)).rejects.toMatchObject({ code: 'AUTH_UNAUTHORIZED' });
  });

  it('refuses a token signed with another secret, even after a good one was seen', async () => {
    const signer = new TokenSigner(SECRET, 60);
    await signer.verify(await signer.sign(claims));
    const forged = await new TokenSigner(`${SECRET}-other`, 60).sign(claims);
    await expect(signer.verify(forged)).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    const otherAlg = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'HS512' })
      .setIssuer('plinth')
      .setIssuedAt()
      .setExpirationTime('1m')
      .sign(new TextEncoder().encode(SECRET.repeat(2)));
    await expect(signer.verify(otherAlg)).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
  });

  it('carries aal, amr and is_anonymous; refuses a token whose aal is not aal1 or aal2', async () => {
    const signer = new TokenSigner(SECRET, 60);
    const amr = [
      { method: 'password', timestamp: 1 },
      { method: 'totp', timestamp: 2 },
    ];
    const c = await signer.verify(await signer.sign({ ...claims, aal: 'aal2', amr, isAnonymous: false }));
    expect(c).toMatchObject({ aal: 'aal2', amr, is_anonymous: false });
    expect(await signer.verify(await signer.sign(claims))).not.toHaveProperty('aal');
    const key = new TextEncoder().encode(SECRET);
    const sign = (extra: Record<string, unknown>) =>
      new SignJWT({ email: claims.email, role: claims.role, sid: claims.sid, ...extra })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(claims.sub)
        .setIssuer('plinth')
        .setIssuedAt()
        .setExpirationTime('1m')
        .sign(key);
    for (const bad of [{ aal: 'aal3' }, { aal: 'aal2', amr: 'totp' }, { aal: 'aal1', amr: [], is_anonymous: 'yes' }]) {
      await expect(signer.verify(await sign(bad))).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    }
  });
});
