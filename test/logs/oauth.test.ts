// OAuth in the auth log: a provider account seen for the first time is logged as linked, then
// every sign-in with it as a sign-in with its provider.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { call } from '../helpers/http.js';
import { uniqueEmail } from '../auth/util.js';
import { OAuthFixture, newSub } from '../auth/oauth-fixture.js';

describe.each(backends())('oauth events in the log (%s)', (backend) => {
  const fx = new OAuthFixture();

  beforeAll(async () => {
    await fx.start(backend);
  });
  afterAll(async () => {
    await fx.close();
  });

  it('logs the link once and each sign-in with its provider', async () => {
    const { t, oidc } = fx;
    const claims = { sub: newSub(), email: uniqueEmail('oauth-log'), email_verified: true };
    let userId = '';
    for (let i = 0; i < 2; i++) {
      const token = await oidc.mintIdToken(claims, { audience: 'plinth-web' });
      const r = await call(t, 'POST', '/api/auth/id-token', { body: { provider: 'kc', token } });
      expect(r.status).toBe(200);
      userId = r.body.user.id;
    }
    const page = await call(t, 'GET', '/api/logs/auth?limit=100', { headers: { 'x-api-key': t.adminKey } });
    const mine = page.body.logs.filter((l: any) => l.body.userId === userId).reverse();
    expect(mine.map((l: any) => [l.eventMessage, l.body.provider])).toEqual([
      ['oauth identity linked', 'kc'],
      ['sign-in', 'kc'],
      ['sign-in', 'kc'],
    ]);
    expect(mine[1].body.method).toBe('oauth');
  });
});
