// A route's schemas are compiled on its first request (src/http/compilers.ts, issue #38), so a
// schema that Ajv or fast-json-stringify cannot compile would first show at a request. This
// app compiles every route's schemas as the route is added, as Fastify does by itself.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { buildDeps, type Deps } from '../../src/deps.js';
import { newAdminKey } from '../../src/auth/credentials.js';
import { freshDb } from '../helpers/db.js';
import { serve } from '../helpers/app.js';
import { at, call } from '../helpers/http.js';

describe('route schemas compiled eagerly', () => {
  let deps: Deps;
  let drop: () => Promise<void>;
  let dataDir: string;
  const adminKey = newAdminKey();

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'plinth-schemas-'));
    const fresh = await freshDb('embedded');
    drop = fresh.drop;
    const config = loadConfig({
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      RATE_LIMIT_PLAN: 'off',
      ADMIN_API_KEY: adminKey,
      HOST: '127.0.0.1',
      PORT: '0',
    });
    deps = await buildDeps(config, { db: fresh.db, engine: 'embedded' });
  });
  afterAll(async () => {
    await deps?.close();
    await drop?.();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("every route's validators and serializers compile; the app then answers as usual", async () => {
    const { app, url } = await serve(deps, { compileSchemasEagerly: true });
    try {
      expect((await call(at(url), 'GET', '/api/health')).status).toBe(200);
      const bad = await call(at(url), 'POST', '/api/database/tables', {
        headers: { 'x-api-key': adminKey },
        body: { tableName: 42 },
      });
      expect([bad.status, bad.body.error]).toEqual([400, 'INVALID_INPUT']);
    } finally {
      await app.close();
    }
  });

  it('a schema that cannot compile fails the start in this mode', async () => {
    const broken = (a: import('fastify').FastifyInstance) =>
      a.post('/broken', { schema: { body: { type: 'no-such-type' } } }, async () => ({}));
    await expect(serve(deps, { compileSchemasEagerly: true, extend: broken })).rejects.toThrow();
  });
});
