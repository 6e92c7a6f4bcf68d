// Functions over HTTP: calling through /api/functions/{slug}, which tells the function who called.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { json, startFunctionsApp } from './helpers.js';

describe.each(backends())('functions on %s', (backend) => {
  let t: TestApp;

  beforeAll(async () => {
    ({ t } = await startFunctionsApp(backend));
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('calling through /api/functions/{slug}', () => {
    it('needs a credential and tells the function who called; client identity headers are stripped', async () => {
      const spoof = { 'x-plinth-user-id': 'spoofed', 'x-plinth-role': 'admin', 'content-type': 'application/json' };
      const none = await t.fetch('/api/functions/echo', { method: 'POST', headers: spoof, body: '{}' });
      expect(none.status).toBe(401);
      const user = await createTestUser(t);
      const r = await t.fetch('/api/functions/echo?q=1', {
        method: 'POST',
        headers: { ...spoof, ...user.auth },
        body: '{"a":1}',
      });
      expect(r.status).toBe(200);
      const b = await json(r);
      expect(b.headers['x-plinth-user-id']).toBe(user.userId);
      expect(b.headers['x-plinth-user-email']).toBe(user.email);
      expect(b.headers['x-plinth-role']).toBe('authenticated');
      expect(b.body).toEqual({ a: 1 });
      expect(b.query).toEqual({ q: '1' });
      const anon = await json(
        await t.fetch('/api/functions/echo', { method: 'POST', headers: { ...spoof, apikey: t.anonKey }, body: '{}' }),
      );
      expect(anon.headers['x-plinth-role']).toBe('anon');
      expect(anon.headers['x-plinth-user-id']).toBeUndefined();
      const adm = await json(
        await t.fetch('/api/functions/echo', {
          method: 'POST',
          headers: { ...spoof, 'x-api-key': t.adminKey },
          body: '{}',
        }),
      );
      expect(adm.headers['x-plinth-role']).toBe('admin');
      // The admin key never reaches the function, in any header or on any path; a user's token does.
      expect(adm.headers['x-api-key']).toBeUndefined();
      expect(b.headers.authorization).toBe(user.auth.authorization);
      for (const [path, headers] of [
        ['/api/functions/echo', { authorization: `Bearer ${t.adminKey}` }],
        ['/api/functions/echo', { apikey: t.adminKey }],
        ['/functions/echo', { 'x-api-key': t.adminKey, authorization: `bearer ${t.adminKey}` }],
      ] as const) {
        const seen = await json(
          await t.fetch(path, {
            method: 'POST',
            headers: { ...headers, 'content-type': 'application/json' },
            body: '{}',
          }),
        );
        expect(JSON.stringify(seen.headers)).not.toContain(t.adminKey);
      }
      // The open path strips them too, and names a caller without a credential anon.
      const open = await json(
        await t.fetch('/functions/echo', { headers: { 'x-plinth-user-id': 'spoofed', 'x-plinth-role': 'admin' } }),
      );
      expect(open.headers['x-plinth-user-id']).toBeUndefined();
      expect(open.headers['x-plinth-role']).toBe('anon');
    });
  });
});
