// Deploys of functions that import packages when the registry is slow or unreachable, and
// bundles over FUNCTION_BUNDLE_MAX_MB (issue #34). The registry sits behind a proxy on loopback
// that refuses or holds every connection; what is in the package cache still deploys.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DenoBundler } from '../../src/functions/runtime/bundler.js';
import { denoBinary } from '../../src/functions/runtime/deno.js';
import { DEFAULT_IMPORT_HOSTS } from '../../src/config/packages.js';
import { backends } from '../helpers/db.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { expectEnvelope, json, PACKAGES_CACHE } from './helpers.js';

const CACHED = "import { v4 } from 'npm:uuid@9.0.1';\nexport default () => new Response(String(v4().length));";
const SDK =
  "import { createClient } from 'npm:@insforge/sdk@1.5.2';\nexport default () => new Response(typeof createClient);";
// Never fetched by any test with a working registry: never in the cache.
const UNCACHED = "import pad from 'npm:left-pad@1.3.0';\nexport default () => new Response(pad('x', 3));";

describe.each(backends())('function imports with the registry down on %s', (backend) => {
  let t: TestApp;
  let admin: Record<string, string>;
  let proxy: net.Server;
  let mode: 'reset' | 'hang' = 'reset';
  const held = new Set<net.Socket>();

  const save = (slug: string, code: string) =>
    t.fetch('/api/functions', { method: 'POST', headers: admin, body: JSON.stringify({ name: slug, slug, code }) });

  beforeAll(async () => {
    // The cache gets what the tests deploy from it, with the registry reachable.
    const warm = new DenoBundler({
      binary: denoBinary(),
      cacheDir: PACKAGES_CACHE,
      importHosts: DEFAULT_IMPORT_HOSTS,
      timeoutMs: 120_000,
      npmRegistry: 'https://registry.npmjs.org',
      npmToken: null,
      npmrc: null,
      proxy: {},
    });
    for (const code of [CACHED, SDK]) await warm.bundle(code, []);
    proxy = net.createServer((socket) => {
      if (mode === 'reset') socket.resetAndDestroy();
      else held.add(socket.on('error', () => {}));
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const port = (proxy.address() as { port: number }).port;
    t = await startApp(backend, {
      FUNCTION_PACKAGES_DIR: PACKAGES_CACHE,
      HTTPS_PROXY: `http://127.0.0.1:${port}`,
      FUNCTION_BUNDLE_TIMEOUT_SECONDS: '4',
      FUNCTION_BUNDLE_MAX_MB: '1',
    });
    admin = { 'x-api-key': t.adminKey, 'content-type': 'application/json' };
  }, 180_000);
  afterAll(async () => {
    for (const s of held) s.destroy();
    proxy?.close();
    await t?.close();
  });

  it('deploys what is in the package cache without the registry', async () => {
    mode = 'reset';
    const r = await save('cached', CACHED);
    expect(r.status, await r.clone().text()).toBe(201);
    expect(await (await t.fetch('/functions/cached')).text()).toBe('36');
  }, 60_000);

  it('answers 503 naming the import when the registry cannot be reached', async () => {
    mode = 'reset';
    const body = await json(await save('uncached', UNCACHED));
    expectEnvelope(body, 503, 'FUNCTION_REGISTRY_UNAVAILABLE');
    expect(body.message).toContain('npm:left-pad@1.3.0');
    expect(body.message).toMatch(/could not be reached/);
  }, 60_000);

  it('answers 503 within FUNCTION_BUNDLE_TIMEOUT_SECONDS when the registry does not answer', async () => {
    mode = 'hang';
    const started = Date.now();
    const body = await json(await save('slow', UNCACHED));
    expectEnvelope(body, 503, 'FUNCTION_REGISTRY_UNAVAILABLE');
    expect(body.message).toMatch(/took longer than 4 s/);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect((await t.fetch('/api/functions/slow', { headers: admin })).status).toBe(404);
  }, 60_000);

  it('answers 413 when the bundle is over FUNCTION_BUNDLE_MAX_MB', async () => {
    const body = await json(await save('big', SDK));
    expectEnvelope(body, 413, 'FUNCTION_BUNDLE_TOO_LARGE');
    expect(body.message).toMatch(/at most 1 MB/);
  }, 60_000);
});
