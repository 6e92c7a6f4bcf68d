// Functions over HTTP: secrets (/api/secrets) and the functions that see them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { expectEnvelope, json, startFunctionsApp, type FunctionsApp } from './helpers.js';

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

  describe('secrets', () => {
    it('creates, masks, hands to functions, replaces workers on change, deletes', async () => {
      const value = 'hello-from-a-secret-value';
      const put = await t.fetch('/api/secrets/GREETING', {
        method: 'PUT',
        headers: admin,
        body: JSON.stringify({ value }),
      });
      expect(put.status).toBe(201);
      const putBody = await put.text();
      expect(putBody).not.toContain(value);
      expect(JSON.parse(putBody)).toMatchObject({
        success: true,
        secret: { name: 'GREETING', preview: expect.any(String) },
      });
      const list = await t.fetch('/api/secrets', { headers: admin });
      const listText = await list.text();
      expect(listText).not.toContain(value);
      expect(JSON.parse(listText).map((s: any) => s.name)).toContain('GREETING');
      expect(await (await t.fetch('/api/secrets/GREETING', { headers: admin })).text()).not.toContain(value);

      const env = (await json(await t.fetch('/functions/echo'))).env;
      expect(env).toEqual({ GREETING: value, HOME: null });

      const again = await t.fetch('/api/secrets/GREETING', {
        method: 'PUT',
        headers: admin,
        body: JSON.stringify({ value: 'changed' }),
      });
      expect(again.status).toBe(200);
      expect((await json(await t.fetch('/functions/echo'))).env.GREETING).toBe('changed');

      const del = await t.fetch('/api/secrets/GREETING', { method: 'DELETE', headers: { 'x-api-key': t.adminKey } });
      expect(del.status).toBe(200);
      expect((await json(await t.fetch('/functions/echo'))).env.GREETING).toBeNull();
      const missing = await t.fetch('/api/secrets/GREETING', {
        method: 'DELETE',
        headers: { 'x-api-key': t.adminKey },
      });
      expect(missing.status).toBe(404);
      expectEnvelope(await json(missing), 404, 'SECRET_NOT_FOUND');
      expect((await t.fetch('/api/secrets/GREETING', { headers: admin })).status).toBe(404);
    });

    it('limits a scoped secret to the functions it names', async () => {
      for (const name of ['Env A', 'Env B'])
        await create({ name, code: 'export default () => Response.json(Deno.env.toObject())' });
      const put = await t.fetch('/api/secrets/ONLY_B', {
        method: 'PUT',
        headers: admin,
        body: JSON.stringify({ value: 'for-b-only', functions: ['env-b'] }),
      });
      expect(put.status).toBe(201);
      expect((await json(put)).secret.functions).toEqual(['env-b']);
      await t.fetch('/api/secrets/SHARED', {
        method: 'PUT',
        headers: admin,
        body: JSON.stringify({ value: 'for-everyone' }),
      });
      const a = await json(await t.fetch('/functions/env-a'));
      const b = await json(await t.fetch('/functions/env-b'));
      expect(a.ONLY_B).toBeUndefined();
      expect(a.SHARED).toBe('for-everyone');
      expect(b.ONLY_B).toBe('for-b-only');
      expect(b.SHARED).toBe('for-everyone');
      // Widening the scope reaches the other function on its next call.
      await t.fetch('/api/secrets/ONLY_B', {
        method: 'PUT',
        headers: admin,
        body: JSON.stringify({ value: 'now-shared', functions: null }),
      });
      expect((await json(await t.fetch('/functions/env-a'))).ONLY_B).toBe('now-shared');
      const bad = await t.fetch('/api/secrets/X', {
        method: 'PUT',
        headers: admin,
        body: JSON.stringify({ value: 'v', functions: ['Not A Slug'] }),
      });
      expect(bad.status).toBe(400);
      for (const n of ['ONLY_B', 'SHARED'])
        await t.fetch(`/api/secrets/${n}`, { method: 'DELETE', headers: { 'x-api-key': t.adminKey } });
    });

    it('hands the current value on every change, back to an earlier one too, and after a save', async () => {
      await create({ name: 'Env C', code: 'export default () => new Response(Deno.env.get("FLIP") ?? "none")' });
      const put = (value: string) =>
        t.fetch('/api/secrets/FLIP', { method: 'PUT', headers: admin, body: JSON.stringify({ value }) });
      const call = async () => (await t.fetch('/functions/env-c')).text();
      expect(await call()).toBe('none');
      // Each version the function ran at is remembered; one coming back must not be served stale.
      for (const value of ['a', 'b', 'a', 'b']) {
        await put(value);
        expect(await call()).toBe(value);
      }
      // A save reads the secrets with the code it checks: a change just before it is seen.
      await put('before-save');
      expect(
        (await update('env-c', { code: 'export default () => new Response("v2:" + Deno.env.get("FLIP"))' })).status,
      ).toBe(200);
      expect(await call()).toBe('v2:before-save');
      await put('after-save');
      expect(await call()).toBe('v2:after-save');
      await t.fetch('/api/secrets/FLIP', { method: 'DELETE', headers: { 'x-api-key': t.adminKey } });
      expect(await call()).toBe('v2:undefined');
    });

    it.each(['1ABC', 'has-dash', 'a'.repeat(129)])('refuses the name %s', async (name) => {
      const r = await t.fetch(`/api/secrets/${name}`, {
        method: 'PUT',
        headers: admin,
        body: JSON.stringify({ value: 'x' }),
      });
      expect(r.status).toBe(400);
    });
  });
});
