// Functions over HTTP: saving, checking, listing and deleting them (/api/functions).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { ECHO, expectEnvelope, json, startFunctionsApp, type FunctionsApp } from './helpers.js';

describe.each(backends())('functions on %s', (backend) => {
  let t: TestApp;
  let admin: Record<string, string>;
  let create: FunctionsApp['create'];
  let update: FunctionsApp['update'];

  beforeAll(async () => {
    ({ t, admin, create, update } = await startFunctionsApp(backend));
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('administration', () => {
    it('creates with a slug made from the name, and returns the spec fields', async () => {
      const r = await create({ name: 'Send Welcome Email!', code: 'export default async () => new Response("hi")' });
      expect(r.status).toBe(201);
      const body = await json(r);
      expect(body.success).toBe(true);
      expect(body.function).toMatchObject({
        slug: 'send-welcome-email',
        name: 'Send Welcome Email!',
        description: '',
        status: 'active',
      });
      expect(Object.keys(body.function).sort()).toEqual(
        [
          'code',
          'created_at',
          'dependencies',
          'deployed_at',
          'description',
          'id',
          'name',
          'slug',
          'status',
          'updated_at',
        ].sort(),
      );
      expect(body.function.deployed_at).not.toBeNull();
    });

    it('keeps deployed_at null for a draft, sets it when activated', async () => {
      const r = await create({
        name: 'Draft one',
        slug: 'draft-one',
        code: 'export default () => new Response("d")',
        status: 'draft',
      });
      const fn = (await json(r)).function;
      expect(fn.status).toBe('draft');
      expect(fn.deployed_at).toBeNull();
      expect((await t.fetch('/functions/draft-one')).status).toBe(404);
      const u = await json(await update('draft-one', { status: 'active' }));
      expect(u.function.status).toBe('active');
      expect(u.function.deployed_at).not.toBeNull();
      expect(await (await t.fetch('/functions/draft-one')).text()).toBe('d');
    });

    it('answers 409 on a taken slug', async () => {
      const r = await create({ name: 'Echo again', slug: 'echo', code: 'export default () => new Response("x")' });
      expect(r.status).toBe(409);
      expectEnvelope(await json(r), 409, 'ALREADY_EXISTS');
      const dup = await create({ name: 'Echo', code: 'export default () => new Response("x")' });
      expect(dup.status).toBe(409);
    });

    it('refuses a syntax error with line and column, storing nothing', async () => {
      const before = (await json(await t.fetch('/api/functions', { headers: admin }))).length;
      const r = await create({
        name: 'Broken',
        code: 'export default async function (req) {\n  return new Response("x"\n}',
      });
      expect(r.status).toBe(400);
      const body = await json(r);
      expectEnvelope(body, 400, 'INVALID_CODE_SYNTAX');
      expect(body.message).toMatch(/line 3, column 1/);
      expect((await json(await t.fetch('/api/functions', { headers: admin }))).length).toBe(before);
      expect((await t.fetch('/api/functions/broken', { headers: admin })).status).toBe(404);
      // An update with broken code changes nothing either.
      const u = await update('echo', { code: 'export default (', name: 'Renamed' });
      expect(u.status).toBe(400);
      expect((await json(await t.fetch('/api/functions/echo', { headers: admin }))).name).toBe('Echo');
    });

    it('refuses code without a default export, and code over 1 MiB', async () => {
      const r = await create({ name: 'No default', code: 'export const x = 1;' });
      expect(r.status).toBe(400);
      expectEnvelope(await json(r), 400, 'INVALID_FUNCTION_CODE');
      const big = await create({
        name: 'Big',
        code: `export default () => new Response("x");\n//${'x'.repeat(1024 * 1024)}`,
      });
      expect(big.status).toBe(413);
      expectEnvelope(await json(big), 413, 'FUNCTION_CODE_TOO_LARGE');
    });

    it('refuses a default export that is not a function, storing nothing and keeping the live version', async () => {
      const before = (await json(await t.fetch('/api/functions', { headers: admin }))).length;
      for (const [code, kind] of [
        ['export default 42;', 'a number'],
        ['export default { fetch() {} };', 'an object'],
        ['const handler = undefined; export default handler;', 'undefined'],
      ]) {
        const r = await create({ name: 'Not a function', code });
        expect(r.status).toBe(400);
        const body = await json(r);
        expectEnvelope(body, 400, 'INVALID_FUNCTION_CODE');
        expect(body.message).toBe(
          `The default export is ${kind}; export a default function that takes a Request and returns a Response.`,
        );
      }
      expect((await json(await t.fetch('/api/functions', { headers: admin }))).length).toBe(before);
      expect((await t.fetch('/api/functions/not-a-function', { headers: admin })).status).toBe(404);
      // An update with such code changes nothing: the previous version keeps answering.
      await create({ name: 'Live one', code: 'export default () => new Response("still v1")' });
      expect(await (await t.fetch('/functions/live-one')).text()).toBe('still v1');
      const u = await update('live-one', { code: 'export default "v2";', name: 'Renamed' });
      expect(u.status).toBe(400);
      expectEnvelope(await json(u), 400, 'INVALID_FUNCTION_CODE');
      const stored = await json(await t.fetch('/api/functions/live-one', { headers: admin }));
      expect(stored).toMatchObject({ name: 'Live one', code: 'export default () => new Response("still v1")' });
      expect(await (await t.fetch('/functions/live-one')).text()).toBe('still v1');
      // A draft is checked when it becomes active.
      await create({ name: 'Draft number', code: 'export default 7;', status: 'draft' });
      const activate = await update('draft-number', { status: 'active' });
      expect(activate.status).toBe(400);
      expectEnvelope(await json(activate), 400, 'INVALID_FUNCTION_CODE');
      expect((await json(await t.fetch('/api/functions/draft-number', { headers: admin }))).status).toBe('draft');
    });

    it.each<[Record<string, unknown>, string]>([
      [{ code: 'export default () => new Response("x")' }, 'name missing'],
      [{ name: 'x' }, 'code missing'],
      [{ name: 'x', code: 'export default () => new Response("x")', slug: 'Bad Slug' }, 'bad slug'],
      [{ name: 'x', code: 'export default () => new Response("x")', status: 'error' }, 'status error on create'],
      [{ name: 'x', code: 'export default () => new Response("x")', extra: 1 }, 'unknown field'],
      [{ name: '   ', code: 'export default () => new Response("x")' }, 'blank name'],
    ])('refuses %j (%s) with 400', async (body) => {
      const r = await create(body);
      expect(r.status).toBe(400);
      expectEnvelope(await json(r), 400, 'INVALID_INPUT');
    });

    it('lists without code and shows detail with code', async () => {
      const list = await json(await t.fetch('/api/functions', { headers: admin }));
      expect(Array.isArray(list)).toBe(true);
      const echo = list.find((f: any) => f.slug === 'echo');
      expect(echo).toBeDefined();
      expect(echo).not.toHaveProperty('code');
      const detail = await json(await t.fetch('/api/functions/echo', { headers: admin }));
      expect(detail.code).toBe(ECHO);
      expect(detail.description).toBe('echoes the request');
    });

    it('is for admins only', async () => {
      const user = await createTestUser(t);
      expect((await t.fetch('/api/functions')).status).toBe(401);
      expect((await t.fetch('/api/functions', { headers: user.auth })).status).toBe(403);
      expect((await t.fetch('/api/functions', { headers: { apikey: t.anonKey } })).status).toBe(403);
      expect((await t.fetch('/api/functions/echo/logs', { headers: user.auth })).status).toBe(403);
      expect((await t.fetch('/api/secrets', { headers: user.auth })).status).toBe(403);
      // A user who GETs a function is pointed at the ways to call it, not at the admin key only.
      const read = await t.fetch('/api/functions/echo', { headers: user.auth });
      expect(read.status).toBe(403);
      const refusal = await json(read);
      expect(refusal.nextActions).toContain('POST /api/functions/{slug}');
      expect(refusal.nextActions).toContain('/functions/{slug}');
    });

    it('deletes, then the function is gone everywhere', async () => {
      await create({ name: 'Short lived', code: 'export default () => new Response("alive")' });
      expect((await t.fetch('/functions/short-lived')).status).toBe(200);
      const r = await t.fetch('/api/functions/short-lived', { method: 'DELETE', headers: { 'x-api-key': t.adminKey } });
      expect(r.status).toBe(200);
      expect(await json(r)).toMatchObject({ success: true, message: expect.any(String) });
      expect((await t.fetch('/api/functions/short-lived', { headers: admin })).status).toBe(404);
      const gone = await t.fetch('/functions/short-lived');
      expect(gone.status).toBe(404);
      expectEnvelope(await json(gone), 404, 'FUNCTION_NOT_FOUND');
      expect(
        (await t.fetch('/api/functions/short-lived', { method: 'DELETE', headers: { 'x-api-key': t.adminKey } }))
          .status,
      ).toBe(404);
    });
  });
});
