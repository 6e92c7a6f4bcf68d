import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@insforge/sdk';
import { backends } from '../helpers/db.js';
import { startFunctionsApp, type FunctionsApp } from '../functions/helpers.js';
import { sdk, signedInClient } from './helpers.js';

// The InsForge SDK's functions.invoke (wire doc section 5) against real Deno functions.
describe.each(backends())('@insforge/sdk functions (%s)', (backend) => {
  let f: FunctionsApp;
  beforeAll(async () => {
    f = await startFunctionsApp(backend);
    const teapot = await f.create({
      name: 'Teapot',
      code: `export default async () => new Response('short and stout', { status: 418, headers: { 'content-type': 'text/plain' } });`,
    });
    expect(teapot.status).toBe(201);
    const nobody = await f.create({
      name: 'Nobody',
      code: `export default async () => new Response(null, { status: 204 });`,
    });
    expect(nobody.status).toBe(201);
  });
  afterAll(async () => {
    await f?.t.close();
  });

  it("invoke as a signed-in user: the function sees method, body, headers and the user's identity", async () => {
    const alice = await signedInClient(f.t, 'fn');
    const { data, error } = await alice.client.functions.invoke('echo', {
      body: { a: 1 },
      headers: { 'x-custom': 'yes', 'x-plinth-role': 'admin' },
    });
    expect(error).toBeNull();
    const echo = data as { method: string; path: string; body: unknown; headers: Record<string, string> };
    expect(echo).toMatchObject({ method: 'POST', path: '/functions/echo', body: { a: 1 } });
    expect(echo.headers).toMatchObject({
      'x-custom': 'yes',
      'x-plinth-role': 'authenticated',
      'x-plinth-user-id': alice.user.id,
      'x-plinth-user-email': alice.email,
      authorization: `Bearer ${alice.accessToken}`,
    });
    expect(echo.headers['content-type']).toMatch(/^application\/json/);
  });

  it('GET with a query in the slug; the anon key is anon; no credential is anon too', async () => {
    const r = await sdk(f.t).functions.invoke('echo?name=x', { method: 'GET' });
    expect(r.error).toBeNull();
    expect(r.data).toMatchObject({ method: 'GET', query: { name: 'x' }, headers: { 'x-plinth-role': 'anon' } });
    expect((r.data as { headers: Record<string, string> }).headers['x-plinth-user-id']).toBeUndefined();
    const bare = await createClient({ baseUrl: f.t.url, retryCount: 0 }).functions.invoke('echo', { method: 'DELETE' });
    expect(bare.data).toMatchObject({ method: 'DELETE', headers: { 'x-plinth-role': 'anon' } });
  });

  it("a wrong Plinth credential is a 401 before the function runs; someone else's credential passes through", async () => {
    const wrong = await createClient({ baseUrl: f.t.url, anonKey: 'anon_wrong', retryCount: 0 }).functions.invoke(
      'echo',
      { body: {} },
    );
    expect(wrong.data).toBeNull();
    expect(wrong.error).toMatchObject({ statusCode: 401, error: 'INVALID_API_KEY' });
    const alice = await signedInClient(f.t, 'fn-forged');
    const [h, p, sig] = alice.accessToken.split('.');
    const forged = `${h}.${p}.${sig!.slice(0, -4)}${sig!.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
    const refused = await createClient({ baseUrl: f.t.url, accessToken: forged, retryCount: 0 }).functions.invoke(
      'echo',
      { body: {} },
    );
    expect(refused.error).toMatchObject({ statusCode: 401, error: 'INVALID_TOKEN' });
    // Another scheme, or a token another issuer made, is the function's business.
    const foreignJwt = `${Buffer.from('{"alg":"HS256"}').toString('base64url')}.${Buffer.from('{"iss":"https://auth.example.com","sub":"u1"}').toString('base64url')}.c2ln`;
    for (const authorization of ['Basic dXNlcjpwYXNz', `Bearer ${foreignJwt}`, 'Bearer whsec_123']) {
      const r = await sdk(f.t).functions.invoke('echo', { method: 'PUT', body: {}, headers: { authorization } });
      expect(r.data, authorization).toMatchObject({ headers: { authorization, 'x-plinth-role': 'anon' } });
    }
  });

  it('the admin key names an admin and never reaches the function', async () => {
    const admin = createClient({ baseUrl: f.t.url, accessToken: f.t.adminKey, retryCount: 0 });
    const r = await admin.functions.invoke('echo', { body: { b: 2 } });
    expect(r.data).toMatchObject({ headers: { 'x-plinth-role': 'admin' } });
    expect(JSON.stringify(r.data)).not.toContain(f.t.adminKey);
  });

  it("the function's own status and text pass through; 204 is data undefined; a missing function is 404", async () => {
    const tea = await sdk(f.t).functions.invoke('teapot', { method: 'GET' });
    expect(tea.data).toBeNull();
    expect(tea.error).toMatchObject({ statusCode: 418 });
    const none = await sdk(f.t).functions.invoke('nobody');
    expect(none).toEqual({ data: undefined, error: null });
    const missing = await sdk(f.t).functions.invoke('no-such-fn');
    expect(missing.error).toMatchObject({ statusCode: 404, error: 'FUNCTION_NOT_FOUND' });
  });
});
