// OAuth benchmark: POST /api/auth/id-token (RS256 ID token checked against the provider's
// cached JWKS, identity look-up, session insert, access token) and the start of a redirect
// sign-in (flow row insert, cookie, authorization URL), each as a ratio to GET /api/health on
// the same server in the same run. The provider is a real oidc-provider in this process.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PLINTH, compare, freePort, requireWrk, spawnServer } from './lib.js';
import { OidcServer } from '../test/auth/oidc-server.js';

export async function benchOAuth(): Promise<void> {
  await requireWrk();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'plinth-bench-oauth-'));
  const port = await freePort();
  const oidc = new OidcServer();
  await oidc.listen();
  await oidc.configure({
    clientId: 'bench',
    clientSecret: 'bench-secret',
    redirectUris: [`http://127.0.0.1:${port}/api/auth/oauth/kc/callback`],
  });
  const plinth = await spawnServer(PLINTH.cmd, PLINTH.args, {
    env: {
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PLAN: 'off',
      PORT: String(port),
      HOST: '127.0.0.1',
      OAUTH_PROVIDERS: 'kc',
      OAUTH_KC_ISSUER: oidc.issuer,
      OAUTH_KC_CLIENT_ID: 'bench',
      OAUTH_KC_CLIENT_SECRET: 'bench-secret',
      AUTH_REDIRECT_URLS: 'http://app.test/cb',
    },
    port,
    readyPath: '/api/health',
    timeoutMs: 120_000,
  });
  try {
    const token = await oidc.mintIdToken(
      { sub: 'bench-user', email: 'bench@example.com', email_verified: true },
      { audience: 'bench', expiresIn: 3600 },
    );
    const body = JSON.stringify({ provider: 'kc', token });
    const first = await fetch(`${plinth.url}/api/auth/id-token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    if (!first.ok) throw new Error(`id-token sign-in failed: ${first.status} ${await first.text()}`);
    const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
    const health = { url: `${plinth.url}/api/health`, pid: plinth.pid, seconds: 5, connections: 16 };
    const results = await compare(
      `OAuth vs GET /api/health on the same server (${process.env.DATABASE_URL ? 'server Postgres' : 'PGlite'})`,
      [
        {
          name: 'POST /api/auth/id-token (JWKS-verified RS256, session)',
          baseline: health,
          subject: {
            url: `${plinth.url}/api/auth/id-token`,
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body,
            pid: plinth.pid,
            seconds: 5,
            connections: 16,
          },
        },
        {
          name: 'GET /api/auth/oauth/kc (start: flow row, cookie, authUrl)',
          baseline: health,
          subject: {
            url: `${plinth.url}/api/auth/oauth/kc?redirect_uri=${encodeURIComponent('http://app.test/cb')}&code_challenge=${challenge}`,
            pid: plinth.pid,
            seconds: 5,
            connections: 16,
          },
        },
      ],
    );
    for (const r of results) {
      console.log(
        `- ${r.name}: ${r.subject.rps.toFixed(0)} req/s = ${r.ratio.toFixed(4)}× health (${r.baseline.rps.toFixed(0)} req/s)`,
      );
    }
  } finally {
    await plinth.stop();
    await oidc.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchOAuth();
