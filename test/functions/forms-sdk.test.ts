// The InsForge SDK inside a function (issue #34): `import { createClient } from 'npm:@insforge/sdk'`
// in a module, and `createClient` in scope in the script form, reaching this Plinth at
// INSFORGE_BASE_URL as the caller (edgeFunctionToken: the caller's bearer token, so RLS applies,
// tried as two users) and as anon (ANON_KEY); database reads and writes, auth getCurrentUser,
// storage upload and download, AI (the OpenAI mock upstream) and email (the function's own
// token, a real SMTP server), through real HTTP on both databases.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtp } from '../auth/smtp.js';
import { sql } from '../database/helpers.js';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { call } from '../helpers/http.js';
import { OpenAiMock } from '../helpers/openai-mock.js';
import { until } from '../helpers/until.js';
import { PACKAGES_CACHE } from './helpers.js';

const AI_KEY = 'sk-test-plinth-upstream-key-forms';

/** One operation per call ({op, body}), each through the SDK as the caller, unless it says otherwise. */
const SDK = `import { createClient } from 'npm:@insforge/sdk';

export default async function (req: Request): Promise<Response> {
  const { op, body } = await req.json();
  const baseUrl = Deno.env.get('INSFORGE_BASE_URL');
  const client = createClient({ baseUrl, edgeFunctionToken: req.headers.get('Authorization')?.replace('Bearer ', '') });
  if (op === 'list') {
    const r = await client.database.from('notes').select('body').order('body');
    return Response.json(r.error ?? r.data.map((n: { body: string }) => n.body), { status: r.status });
  }
  if (op === 'add') {
    const r = await client.database.from('notes').insert([{ body }]).select('body,owner');
    return Response.json(r.error ?? r.data, { status: r.status });
  }
  if (op === 'whoami') {
    const { data, error } = await client.auth.getCurrentUser();
    return Response.json(error ?? { id: data?.user?.id ?? null, email: data?.user?.email ?? null });
  }
  if (op === 'anon') {
    const anon = createClient({ baseUrl, anonKey: Deno.env.get('ANON_KEY') });
    const r = await anon.database.from('notes').select('body').order('body');
    return Response.json(r.error ?? r.data.map((n: { body: string }) => n.body), { status: r.status });
  }
  if (op === 'files') {
    const up = await client.storage.from('priv').upload(body.key, new Blob([body.text], { type: 'text/plain' }));
    if (up.error) return Response.json(up.error, { status: 500 });
    const down = await client.storage.from('priv').download(up.data!.key);
    return Response.json({ key: up.data!.key, text: down.data ? await down.data.text() : null, error: down.error });
  }
  if (op === 'ai') {
    const r = await client.ai.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: body }] });
    return Response.json({ content: r.choices[0].message.content });
  }
  if (op === 'mail') {
    // Mail goes with the function's own token (docs/email.md).
    const mailer = createClient({ baseUrl, edgeFunctionToken: req.headers.get('x-plinth-function-token') ?? undefined });
    const { error } = await mailer.emails.send({ to: body.to, subject: body.subject, html: '<p>' + body.text + '</p>' });
    return Response.json({ error });
  }
  return new Response('unknown op', { status: 400 });
}`;

// InsForge's script form: createClient (and the base64 helpers) in scope without an import.
const SCRIPT = `module.exports = async function (request) {
  const client = createClient({
    baseUrl: Deno.env.get('INSFORGE_BASE_URL'),
    edgeFunctionToken: request.headers.get('Authorization')?.replace('Bearer ', ''),
  });
  const { data, error } = await client.database.from('notes').select('body').order('body');
  const { data: me } = await client.auth.getCurrentUser();
  return new Response(
    JSON.stringify({ user: me?.user?.id ?? null, notes: error ?? data.map((n) => n.body), b64: encodeBase64('ok') }),
    { headers: { 'Content-Type': 'application/json' } },
  );
};`;

describe.each(backends())('the InsForge SDK inside a function (%s)', (backend) => {
  let t: TestApp;
  let mock: OpenAiMock;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let a: Awaited<ReturnType<typeof createTestUser>>;
  let b: Awaited<ReturnType<typeof createTestUser>>;
  const admin = () => ({ 'x-api-key': t.adminKey });
  const run = (slug: string, op: string, body: unknown, headers: Record<string, string> = {}) =>
    call(t, 'POST', `/functions/${slug}`, { body: { op, body }, headers });

  beforeAll(async () => {
    mock = await new OpenAiMock(AI_KEY).start();
    smtp = await startSmtp();
    t = await startApp(backend, {
      FUNCTION_PACKAGES_DIR: PACKAGES_CACHE,
      AI_BASE_URL: mock.baseUrl,
      AI_API_KEY: AI_KEY,
      SMTP_URL: smtp.url,
      MAIL_FROM: 'App <app@example.com>',
    });
    await sql(
      t,
      `create table public.notes (id serial primary key, owner uuid default auth.uid(), body text not null)`,
    );
    await sql(t, `grant select, insert on public.notes to authenticated`);
    await sql(t, `grant select on public.notes to anon`);
    await sql(t, `grant usage on all sequences in schema public to authenticated`);
    await sql(t, `alter table public.notes enable row level security`);
    await sql(
      t,
      `create policy own on public.notes for all to authenticated using (owner = auth.uid()) with check (owner = auth.uid())`,
    );
    await sql(t, `create policy public_read on public.notes for select to anon using (body like 'public%')`);
    await sql(t, `insert into public.notes (owner, body) values (null, 'public note')`);
    const bucket = await call(t, 'POST', '/api/storage/buckets', {
      headers: admin(),
      body: { bucketName: 'priv', isPublic: false },
    });
    expect(bucket.status).toBe(201);
    for (const [slug, code] of [
      ['sdk', SDK],
      ['sdk-script', SCRIPT],
    ] as const) {
      const r = await call(t, 'POST', '/api/functions', { headers: admin(), body: { name: slug, slug, code } });
      expect(r.status, r.text).toBe(201);
    }
    a = await createTestUser(t);
    b = await createTestUser(t);
  }, 240_000);
  afterAll(async () => {
    await t?.close();
    await mock?.stop();
    await smtp?.close();
  });

  it('reads and writes as the caller with edgeFunctionToken: RLS shows each of two users their own rows', async () => {
    expect(await run('sdk', 'add', 'a1', a.auth)).toMatchObject({
      status: 201,
      body: [{ body: 'a1', owner: a.userId }],
    });
    expect((await run('sdk', 'add', 'a2', a.auth)).status).toBe(201);
    expect(await run('sdk', 'add', 'b1', b.auth)).toMatchObject({
      status: 201,
      body: [{ body: 'b1', owner: b.userId }],
    });
    expect(await run('sdk', 'list', null, a.auth)).toMatchObject({ status: 200, body: ['a1', 'a2'] });
    expect(await run('sdk', 'list', null, b.auth)).toMatchObject({ status: 200, body: ['b1'] });
    // With the anon key of ANON_KEY: anon's policy only.
    expect(await run('sdk', 'anon', null, a.auth)).toMatchObject({ status: 200, body: ['public note'] });
    // Without a credential the caller is nobody: the write is refused by Plinth, not made as someone.
    const none = await run('sdk', 'add', 'x');
    expect(none.status).toBeGreaterThanOrEqual(400);
    const { rows } = await sql(t, `select count(*)::int as n from public.notes where body = 'x'`);
    expect(rows).toEqual([{ n: 0 }]);
  });

  it('auth.getCurrentUser answers the caller', async () => {
    expect((await run('sdk', 'whoami', null, a.auth)).body).toEqual({ id: a.userId, email: a.email });
    expect((await run('sdk', 'whoami', null, b.auth)).body).toEqual({ id: b.userId, email: b.email });
  });

  it('the script form has createClient in scope: the same rows as the caller', async () => {
    expect((await call(t, 'POST', '/functions/sdk-script', { headers: a.auth })).body).toEqual({
      user: a.userId,
      notes: ['a1', 'a2'],
      b64: 'b2s=',
    });
    expect((await call(t, 'POST', '/functions/sdk-script', { headers: b.auth })).body).toMatchObject({
      user: b.userId,
      notes: ['b1'],
    });
  });

  it('storage: uploads to a private bucket as the caller and downloads it again; the other user cannot', async () => {
    const up = await run('sdk', 'files', { key: 'from-fn/a.txt', text: 'written by a function' }, a.auth);
    expect(up.body).toMatchObject({ key: 'from-fn/a.txt', text: 'written by a function', error: null });
    const { rows } = await sql(t, `select uploaded_by::text as by from storage.objects where key = 'from-fn/a.txt'`);
    expect(rows).toEqual([{ by: a.userId }]);
    const other = await call(t, 'GET', '/api/storage/buckets/priv/objects/from-fn%2Fa.txt', { token: b.token });
    expect(other.status).toBe(404);
  });

  it('AI: chat completions through the gateway as the caller', async () => {
    expect((await run('sdk', 'ai', 'Hi from a function', a.auth)).body).toEqual({
      content: 'echo: Hi from a function',
    });
    expect(mock.last()!.body).toMatchObject({ model: 'gpt-test' });
  });

  it("email: emails.send with the function's own token reaches the SMTP server", async () => {
    const r = await run('sdk', 'mail', { to: 'sdk-fn@example.com', subject: 'From the SDK', text: 'hello' });
    expect(r.body).toEqual({ error: null });
    await until(async () => smtp.count('sdk-fn@example.com') === 1, 15_000, 'the mail');
    expect(smtp.mails.find((m) => m.to.includes('sdk-fn@example.com'))!.raw).toMatch(/Subject: From the SDK/);
  });
});
