// Saves over HTTP (the check loads the module, then the row is written): what serves and what
// is stored after refused, slow, back-to-back and concurrent saves, and secrets changed during a save.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { expectEnvelope, json, startFunctionsApp, type FunctionsApp } from './helpers.js';

const answer = (text: string) => `export default () => new Response(${JSON.stringify(text)});`;
// A module whose load takes `ms` (top-level await) before it exports `rest`.
const slow = (ms: number, rest: string) => `await new Promise((r) => setTimeout(r, ${ms}));\n${rest}`;

describe.each(backends())('saves on %s', (backend) => {
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

  const call = async (slug: string) => (await t.fetch(`/functions/${slug}`)).text();
  const row = async (slug: string) => json(await t.fetch(`/api/functions/${slug}`, { headers: admin }));

  it('refuses a check that fails, quick or slow, keeping the row and the serving version', async () => {
    expect((await create({ name: 'Kept', code: answer('v1') })).status).toBe(201);
    expect(await call('kept')).toBe('v1');
    const v1 = await row('kept');
    for (const code of ['export default 42;', slow(800, 'export default 42;')]) {
      const r = await update('kept', { code, name: 'Renamed', description: 'changed' });
      expect(r.status).toBe(400);
      const body = await json(r);
      expectEnvelope(body, 400, 'INVALID_FUNCTION_CODE');
      expect(body.message).toBe(
        'The default export is a number; export a default function that takes a Request and returns a Response.',
      );
      expect(await row('kept')).toEqual(v1);
      expect(await call('kept')).toBe('v1');
    }
    // A create refused the same way stores nothing.
    const refused = await create({ name: 'Never', code: slow(800, 'export default 42;') });
    expect(refused.status).toBe(400);
    expect((await t.fetch('/api/functions/never', { headers: admin })).status).toBe(404);
  });

  it('shows no row of a save while its check loads, and keeps none when the check refuses it', async () => {
    // The row is written while the module loads (server Postgres: in a transaction the refusal rolls back).
    expect((await create({ name: 'During', code: answer('d1') })).status).toBe(201);
    const before = await row('during');
    const refusing = update('during', { code: slow(600, 'export default 42;'), name: 'Renamed during' });
    await new Promise((r) => setTimeout(r, 300));
    expect(await row('during')).toEqual(before);
    expect(await call('during')).toBe('d1');
    expect((await refusing).status).toBe(400);
    expect(await row('during')).toEqual(before);
    expect(await call('during')).toBe('d1');
    // A refused create leaves its slug free: nothing of its insert stayed.
    const never = create({ name: 'Rolled back', code: slow(600, 'export default null;') });
    await new Promise((r) => setTimeout(r, 300));
    expect((await t.fetch('/api/functions/rolled-back', { headers: admin })).status).toBe(404);
    expect((await never).status).toBe(400);
    expect((await t.fetch('/api/functions/rolled-back', { headers: admin })).status).toBe(404);
    expect((await create({ name: 'Rolled back', code: answer('now') })).status).toBe(201);
    expect(await call('rolled-back')).toBe('now');
  });

  it('answers the first call after each save with the code just saved', async () => {
    expect((await create({ name: 'Fresh', code: answer('f0') })).status).toBe(201);
    expect(await call('fresh')).toBe('f0');
    for (let i = 1; i <= 4; i++) {
      // Every other save finds the warm process's standby worker ready (made 1 s after a deploy).
      if (i % 2 === 0) await new Promise((r) => setTimeout(r, 1300));
      expect((await update('fresh', { code: answer(`f${i}`) })).status).toBe(200);
      expect(await call('fresh')).toBe(`f${i}`);
    }
  });

  it('stores and serves a save whose check is slow', async () => {
    const r = await create({ name: 'Slow load', code: slow(800, answer('slow v1')) });
    expect(r.status).toBe(201);
    expect(await call('slow-load')).toBe('slow v1');
    expect((await update('slow-load', { code: slow(800, answer('slow v2')) })).status).toBe(200);
    expect((await row('slow-load')).code).toContain('slow v2');
    expect(await call('slow-load')).toBe('slow v2');
  });

  it('serves the last of two saves made back to back, and the stored one of two made at once', async () => {
    expect((await create({ name: 'Twice', code: answer('a') })).status).toBe(201);
    expect((await update('twice', { code: answer('b') })).status).toBe(200);
    expect((await update('twice', { code: answer('c') })).status).toBe(200);
    expect(await call('twice')).toBe('c');
    for (let i = 0; i < 3; i++) {
      const [x, y] = await Promise.all([
        update('twice', { code: answer(`x${i}`) }),
        update('twice', { code: answer(`y${i}`) }),
      ]);
      expect([x.status, y.status]).toEqual([200, 200]);
      const code = (await row('twice')).code as string;
      expect(await call('twice')).toBe(code.includes(`"x${i}"`) ? `x${i}` : `y${i}`);
    }
  });

  it('honours a secret changed while a save loads the module, and one changed right after it', async () => {
    const put = (value: string) =>
      t.fetch('/api/secrets/AROUND', { method: 'PUT', headers: admin, body: JSON.stringify({ value }) });
    await put('before');
    const code = (v: string) =>
      slow(300, `export default () => new Response(${JSON.stringify(v)} + ":" + Deno.env.get("AROUND"));`);
    const saving = create({ name: 'Around', code: code('v1') });
    await new Promise((r) => setTimeout(r, 100));
    expect((await put('during')).status).toBe(200);
    expect((await saving).status).toBe(201);
    expect(await call('around')).toBe('v1:during');
    const again = update('around', { code: code('v2') });
    await new Promise((r) => setTimeout(r, 100));
    await put('during2');
    expect((await again).status).toBe(200);
    expect(await call('around')).toBe('v2:during2');
    await put('after');
    expect(await call('around')).toBe('v2:after');
  });
});
