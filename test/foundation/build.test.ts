// The build (`npm run build`, scripts/build.mjs: esbuild bundles at the build folder's top level)
// finds every file its code reads beside it: the SQL migrations, the agents' docs bundle, the
// Deno host script of functions, the image render process, the standalone function runtime's
// documented path. Run with plain Node, no TypeScript loader, as `npm start` runs it.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtServer } from '../helpers/build.js';
import { at, call, type Target } from '../helpers/http.js';
import { freePort } from '../helpers/port.js';
import { flatPng } from '../storage/helpers.js';

let BUILD_DIR = '';
beforeAll(async () => {
  BUILD_DIR = await builtServer();
}, 300_000);

function start(script: string, env: Record<string, string>) {
  const { DATABASE_URL: _d, ADMIN_API_KEY: _a, REDIS_URL: _r, ...rest } = process.env;
  const proc = spawn(process.execPath, [script], { env: { ...rest, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return { proc, output: () => out, exited };
}

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await Promise.resolve(check()).catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('the built server', () => {
  let dataDir: string;
  let server: ReturnType<typeof start>;
  let target: Target;
  let admin: Record<string, string>;
  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'plinth-build-'));
    const port = await freePort();
    target = at(`http://127.0.0.1:${port}`);
    server = start(`${BUILD_DIR}/main.js`, { DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' });
    await until('health', async () => (await call(target, 'GET', '/api/health')).status === 200);
    admin = { 'x-api-key': /\b(ik_[0-9a-f]{64})\b/.exec(server.output())![1]! };
  }, 120_000);
  afterAll(async () => {
    server?.proc.kill('SIGTERM');
    await server?.exited;
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves the agents’ docs bundled at build time', async () => {
    const r = await call(target, 'GET', '/api/docs');
    expect(r.status).toBe(200);
    expect((r.body.docs as { name: string }[]).map((d) => d.name)).toEqual(
      expect.arrayContaining(['mcp', 'functions']),
    );
  });

  it('runs a function in Deno through the host script', async () => {
    const code = 'export default () => new Response("from the build")';
    const saved = await call(target, 'POST', '/api/functions', { headers: admin, body: { name: 'Built', code } });
    expect(saved.status).toBe(201);
    expect((await call(target, 'GET', '/functions/built')).text).toBe('from the build');
  }, 60_000);

  it('renders an image in its render process', async () => {
    const bucket = await call(target, 'POST', '/api/storage/buckets', {
      headers: admin,
      body: { bucketName: 'pics', isPublic: true },
    });
    expect(bucket.status).toBeLessThan(300);
    const put = await call(target, 'PUT', '/api/storage/buckets/pics/objects/a.png', {
      headers: { ...admin, 'content-type': 'image/png' },
      raw: new Uint8Array(flatPng(32)),
    });
    expect(put.status).toBe(200);
    const r = await call(target, 'GET', '/api/storage/buckets/pics/objects/a.png?width=8&format=webp');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('image/webp');
  }, 60_000);
});

it('starts the standalone function runtime from its documented path', async () => {
  const port = await freePort();
  const runtime = start(`${BUILD_DIR}/functions/runtime/main.js`, {
    PORT: String(port),
    HOST: '127.0.0.1',
    FUNCTION_RUNTIME_TOKEN: 'a'.repeat(32),
  });
  try {
    await until('the runtime', () => runtime.output().includes('function runtime listening'), 60_000);
  } finally {
    runtime.proc.kill('SIGTERM');
    await runtime.exited;
  }
}, 90_000);
