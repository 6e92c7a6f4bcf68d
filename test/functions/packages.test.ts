// Functions that import packages (issue #34): npm:, https: (a module server on loopback), jsr:,
// resolved and bundled at deploy, through real HTTP, against the real npm registry. One
// package cache for the whole file (and across runs), so only the first run downloads.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { expectEnvelope, json, PACKAGES_CACHE } from './helpers.js';

// uuid 9 has no v7, uuid 10 has: two functions pinning each see their own.
const UUID = (spec: string) => `
import * as uuid from '${spec}';
export default () => Response.json({ v7: typeof uuid.v7, v4: uuid.v4().length });`;

const SDK = `
import { createClient } from 'npm:@insforge/sdk';
export default async (req: Request) => {
  const client = createClient({ baseUrl: Deno.env.get('INSFORGE_BASE_URL') });
  return Response.json({ from: typeof client.database.from, url: Deno.env.get('INSFORGE_BASE_URL') ? 'set' : 'unset' });
};`;

const MODULES: Record<string, string> = {
  '/greet.js': "export const greet = (n) => 'hello ' + n;",
  '/broken.js': 'export const greet = (n) => { return `hello ${n` ;',
  // An imported module runs in the function's sandbox: it cannot read files, spawn or reach loopback.
  '/escape.js': `
    import { createRequire } from 'node:module';
    const tries = {
      read: () => Deno.readTextFile('/etc/passwd'),
      requireFs: () => createRequire('file:///plinth/function.js')('node:fs').readFileSync('/etc/hostname', 'utf8'),
      spawn: () => new Deno.Command('/bin/sh', { args: ['-c', 'echo escaped'] }).output(),
      loopback: (url) => fetch(url).then((r) => r.status),
    };
    export async function attempt(name, arg) {
      try { return { ok: true, value: String(await tries[name](arg)) }; }
      catch (err) { return { ok: false, name: err?.name }; }
    }`,
};

describe.each(backends())('function imports on %s', (backend) => {
  let t: TestApp;
  let admin: Record<string, string>;
  let modules: http.Server;
  let host = '';

  const save = (body: Record<string, unknown>) =>
    t.fetch('/api/functions', { method: 'POST', headers: admin, body: JSON.stringify(body) });
  const update = (slug: string, body: Record<string, unknown>) =>
    t.fetch(`/api/functions/${slug}`, { method: 'PUT', headers: admin, body: JSON.stringify(body) });
  const call = async (slug: string) => {
    const r = await t.fetch(`/functions/${slug}`);
    return { status: r.status, body: await json(r) };
  };
  const deploy = async (slug: string, code: string) => {
    const r = await save({ name: slug, slug, code });
    const body = await json(r);
    expect(r.status, JSON.stringify(body)).toBe(201);
    return body;
  };

  beforeAll(async () => {
    modules = http.createServer((req, res) => {
      const body = MODULES[req.url ?? ''];
      res
        .writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/javascript' })
        .end(body ?? 'not found');
    });
    await new Promise<void>((r) => modules.listen(0, '127.0.0.1', r));
    host = `127.0.0.1:${(modules.address() as { port: number }).port}`;
    t = await startApp(backend, { FUNCTION_PACKAGES_DIR: PACKAGES_CACHE, FUNCTION_IMPORT_HOSTS: host });
    admin = { 'x-api-key': t.adminKey, 'content-type': 'application/json' };
  }, 120_000);
  afterAll(async () => {
    modules?.close();
    await t?.close();
  });

  it('runs npm:name@version and two pinned versions of one package side by side', async () => {
    const saved = await deploy('uuid9', UUID('npm:uuid@9.0.1'));
    expect(saved.function.dependencies).toEqual([{ specifier: 'npm:uuid@9.0.1', resolved: 'npm:uuid@9.0.1' }]);
    await deploy('uuid10', UUID('npm:uuid@^10'));
    expect(await call('uuid9')).toEqual({ status: 200, body: { v7: 'undefined', v4: 36 } });
    expect(await call('uuid10')).toEqual({ status: 200, body: { v7: 'function', v4: 36 } });
    const got = await json(await t.fetch('/api/functions/uuid10', { headers: admin }));
    expect(got.dependencies).toEqual([{ specifier: 'npm:uuid@^10', resolved: 'npm:uuid@10.0.0' }]);
  }, 120_000);

  it('runs npm:@scope/name (the InsForge SDK) and npm:@scope/name@version/sub/path', async () => {
    await deploy('sdk', SDK);
    expect(await call('sdk')).toEqual({ status: 200, body: { from: 'function', url: 'set' } });
    const sub = await deploy(
      'sdk-sub',
      `import * as ssr from 'npm:@insforge/sdk@1.5.2/ssr';\nexport default () => Response.json({ keys: Object.keys(ssr).length > 0 });`,
    );
    expect(sub.function.dependencies).toEqual([
      { specifier: 'npm:@insforge/sdk@1.5.2/ssr', resolved: 'npm:@insforge/sdk@1.5.2/ssr' },
    ]);
    expect(await call('sdk-sub')).toEqual({ status: 200, body: { keys: true } });
  }, 120_000);

  it('runs https: imports of an allowed host and refuses other hosts, and jsr: when jsr.io is not allowed', async () => {
    const url = `http://${host}/greet.js`;
    const saved = await deploy(
      'greet',
      `import { greet } from '${url}';\nexport default () => new Response(greet('you'));`,
    );
    expect(saved.function.dependencies).toEqual([{ specifier: url, resolved: url }]);
    const r = await t.fetch('/functions/greet');
    expect(await r.text()).toBe('hello you');
    for (const spec of ['https://example.com/mod.js', 'jsr:@std/assert@1']) {
      const res = await save({
        name: 'nope',
        code: `import * as m from '${spec}';\nexport default () => Response.json(Object.keys(m));`,
      });
      const body = await json(res);
      expectEnvelope(body, 400, 'FUNCTION_IMPORT_NOT_ALLOWED');
      expect(body.message).toContain(spec);
    }
  }, 60_000);

  it('runs an imported module with no more rights than the function: no files, no spawn, no loopback', async () => {
    await deploy(
      'escape',
      `import { attempt } from 'http://${host}/escape.js';
export default async (req: Request) => Response.json(await attempt(new URL(req.url).searchParams.get('a'), 'http://${host}/greet.js'));`,
    );
    for (const a of ['read', 'requireFs', 'spawn', 'loopback']) {
      const r = await t.fetch(`/functions/escape?a=${a}`);
      const body = await json(r);
      expect(body.ok, `${a}: ${JSON.stringify(body)}`).toBe(false);
      expect(body.name, a).toMatch(/NotCapable|PermissionDenied/);
    }
  }, 60_000);

  it('answers 400 naming the specifier for a missing package, version, path or module, and a broken dependency', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['npm:plinth-no-such-package-34', 'FUNCTION_IMPORT_NOT_FOUND', /404/],
      ['npm:uuid@99.0.0', 'FUNCTION_IMPORT_NOT_FOUND', /no version matching "99\.0\.0"/],
      ['npm:uuid@9.0.1/no/such/path', 'FUNCTION_IMPORT_NOT_FOUND', /no such path/],
      ['nmp:uuid', 'FUNCTION_IMPORT_NOT_ALLOWED', /npm:name/],
      [`http://${host}/missing.js`, 'FUNCTION_IMPORT_NOT_FOUND', /not found/],
      [`http://${host}/broken.js`, 'FUNCTION_IMPORT_FAILED', /Unterminated template/],
    ];
    for (const [spec, code, said] of cases) {
      const res = await save({
        name: 'bad',
        code: `import * as m from '${spec}';\nexport default () => Response.json(Object.keys(m));`,
      });
      const body = await json(res);
      expectEnvelope(body, 400, code);
      expect(body.message, spec).toContain(
        spec.startsWith('http') && code === 'FUNCTION_IMPORT_FAILED' ? 'broken.js' : spec,
      );
      expect(body.message, spec).toMatch(said);
    }
    expect((await t.fetch('/api/functions/bad', { headers: admin })).status).toBe(404);
  }, 120_000);

  it('keeps the version serving when a new version does not deploy', async () => {
    await deploy('keep', UUID('npm:uuid@9.0.1'));
    const r = await update('keep', { code: UUID('npm:uuid@99.0.0') });
    expectEnvelope(await json(r), 400, 'FUNCTION_IMPORT_NOT_FOUND');
    expect(await call('keep')).toEqual({ status: 200, body: { v7: 'undefined', v4: 36 } });
    const got = await json(await t.fetch('/api/functions/keep', { headers: admin }));
    expect(got.code).toBe(UUID('npm:uuid@9.0.1'));
    expect(got.dependencies).toEqual([{ specifier: 'npm:uuid@9.0.1', resolved: 'npm:uuid@9.0.1' }]);
  }, 120_000);
});
