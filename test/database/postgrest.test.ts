// The PostgREST dialect over HTTP: embedding, the grammar's operators, Prefer, Range, single
// objects, RPC and the PostgREST error fields, on both records paths and both backends.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { call } from '../helpers/http.js';
import { admin, envelope, sql } from './helpers.js';
import { ANN, blogSchema } from './fixture-blog.js';

type User = Awaited<ReturnType<typeof createTestUser>>;
const R = '/api/database/records';

describe.each(backends())('PostgREST dialect (%s)', (backend) => {
  let t: TestApp;
  let a: User;
  let b: User;
  const get = (path: string, headers: Record<string, string> = {}) =>
    call(t, 'GET', path, { headers: { ...admin(t), ...headers } });

  beforeAll(async () => {
    t = await startApp(backend);
    await blogSchema(t);
    a = await createTestUser(t);
    b = await createTestUser(t);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('embeds many-to-one, one-to-many and nested relations in one answer', async () => {
    let r = await get(`${R}/posts?select=id,title,author:profiles(name)&order=id`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual([
      { id: 1, title: 'hello', author: { name: 'Ann' } },
      { id: 2, title: 'second', author: { name: 'Ann' } },
      { id: 3, title: 'bobs', author: { name: 'Bob' } },
      { id: 4, title: 'orphan', author: null },
    ]);
    r = await get(`/api/db/profiles?select=name,posts(title)&order=name&posts.order=id.desc`);
    expect(r.body).toEqual([
      { name: 'Ann', posts: [{ title: 'second' }, { title: 'hello' }] },
      { name: 'Bob', posts: [{ title: 'bobs' }] },
      { name: 'Cy', posts: [] },
    ]);
    await sql(t, `insert into public.comments (post_id, body, owner) values (1, 'nice', null)`);
    r = await get(`${R}/comments?select=body,post:posts(title,author:profiles(name,org))`);
    expect(r.body).toEqual([{ body: 'nice', post: { title: 'hello', author: { name: 'Ann', org: 'acme' } } }]);
    // one-to-one (the key is unique on the embedded side): an object, not an array
    r = await get(`${R}/profiles?select=name,settings(theme)&order=name&limit=2`);
    expect(r.body).toEqual([
      { name: 'Ann', settings: { theme: 'dark' } },
      { name: 'Bob', settings: null },
    ]);
    // by the foreign key column, and * with an embed
    r = await get(`${R}/posts?select=*,author_id(name)&id=eq.3`);
    expect(r.body).toEqual([expect.objectContaining({ title: 'bobs', score: 9, author_id: { name: 'Bob' } })]);
  });

  it('filters and orders embedded rows; !inner filters the parents', async () => {
    let r = await get(`${R}/posts?select=title,author:profiles(name)&author.name=eq.Bob&order=id`);
    expect(r.body.map((p: any) => p.author?.name ?? null)).toEqual([null, null, 'Bob', null]);
    r = await get(`${R}/posts?select=title,author:profiles!inner(name)&author.name=eq.Bob`, { prefer: 'count=exact' });
    expect(r.body).toEqual([{ title: 'bobs', author: { name: 'Bob' } }]);
    expect(r.headers.get('content-range')).toBe('0-0/1');
    r = await get(`${R}/profiles?select=name,posts!inner(title)&posts.score=gt.4&order=name`);
    expect(r.body).toEqual([
      { name: 'Ann', posts: [{ title: 'hello' }] },
      { name: 'Bob', posts: [{ title: 'bobs' }] },
    ]);
    r = await get(`${R}/posts?select=title,author:profiles(name)&author.name=eq.Bob&author=not.is.null`);
    expect(r.body).toEqual([{ title: 'bobs', author: { name: 'Bob' } }]);
    r = await get(`${R}/profiles?select=name,posts(id)&posts=is.null`);
    expect(r.body).toEqual([{ name: 'Cy', posts: [] }]);
    r = await get(`${R}/profiles?select=name,posts(title)&posts.order=score.asc&posts.limit=1&order=name&limit=1`);
    expect(r.body).toEqual([{ name: 'Ann', posts: [{ title: 'second' }] }]);
    r = await get(`${R}/posts?select=title,author:profiles(name)&author_id=not.is.null&order=author(name).desc,id.asc`);
    expect(r.body.map((p: any) => p.title)).toEqual(['bobs', 'hello', 'second']);
    r = await get(`${R}/posts?select=title&nope.name=eq.x`);
    expect(r.status).toBe(400);
    expect(r.body.message).toContain('not an embedded relation');
  });

  it('answers an ambiguous or missing relationship with 300 PGRST201 / 400 PGRST200 and a hint', async () => {
    let r = await get(`${R}/profiles?select=name,reviews(stars)`);
    expect(r.status).toBe(300); // PostgREST's status for PGRST201
    envelope(r);
    expect(r.body).toMatchObject({ error: 'AMBIGUOUS_RELATION', code: 'PGRST201' });
    expect(r.body.hint).toContain('reviews!reviews_reviewer_id_fkey');
    expect(JSON.stringify(r.body.details)).toContain('reviews_subject_id_fkey');
    r = await get(
      `${R}/profiles?select=name,written:reviews!reviewer_id(stars),got:reviews!reviews_subject_id_fkey(stars)&order=name`,
    );
    expect(r.status).toBe(200);
    expect(r.body.slice(0, 2)).toEqual([
      { name: 'Ann', written: [{ stars: 4 }], got: [] },
      { name: 'Bob', written: [], got: [{ stars: 4 }] },
    ]);
    // PostgREST's self reference: the key column is the referenced row, the table (or `!<key column>`) the referencing rows.
    r = await get(`${R}/emp?select=name,boss(name),reports:emp!boss(name)&order=id&reports.order=id`);
    expect(r.body).toEqual([
      { name: 'chief', boss: null, reports: [{ name: 'dev' }, { name: 'ops' }] },
      { name: 'dev', boss: { name: 'chief' }, reports: [] },
      { name: 'ops', boss: { name: 'chief' }, reports: [] },
    ]);
    r = await get(`${R}/todos?select=*,profiles(*)`);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: 'RELATION_NOT_FOUND', code: 'PGRST200' });
    // PostgREST's hint is null here; our guidance is in nextActions.
    expect(r.body.hint).toBeNull();
    expect(r.body.nextActions).toContain('foreign key');
  });

  it('answers hostile embeds and operators with a 4xx envelope, never a 500', async () => {
    const bad = [
      'profiles?select=*,posts(*)&posts.limit=x',
      'profiles?select=*,posts(*)&posts.nope=eq.1',
      'posts?select=*,author:profiles(nope)',
      'posts?select=*,author:profiles(name)&order=author(nope)',
      'profiles?select=*,posts(*)&order=posts(title)',
      'posts?select=*,author:profiles!nope(name)',
      'posts?select=*,a:profiles(name),a:profiles(org)',
      'posts?select=*,x:posts!posts_author_id_fkey(*)',
      'posts?select=title::regclass',
      'posts?select=body->%27x',
      'posts?body=fts(nope).x',
      'posts?tags=cs.notanarray',
      'posts?score=adj.[1,5)',
      'posts?title=like(any).%7Ba,b',
      'posts?select=*,author:profiles(*,posts(*,comments(*,post:posts(*,author:profiles(*,posts(*,comments(*))))))))',
    ];
    for (const q of bad) {
      const r = await get(`${R}/${q}`);
      expect(r.status, `${q}: ${r.text}`).toBeGreaterThanOrEqual(400);
      expect(r.status, `${q}: ${r.text}`).toBeLessThan(500);
      envelope(r);
      expect(typeof r.body.code, q).toBe('string');
    }
    // A hostile value in an embedded filter is only a value.
    const r = await get(`${R}/posts?select=id,author:profiles(name)&author.name=eq.x'%3Bdrop+table+posts`);
    expect(r.status).toBe(200);
    expect(r.body.map((p: any) => p.author)).toEqual([null, null, null, null]);
  });

  it('parses the operators and logic trees postgrest-js emits', async () => {
    const titles = async (qs: string) => {
      const r = await get(`${R}/posts?select=title&order=id&${qs}`);
      expect(r.status, `${qs}: ${r.text}`).toBe(200);
      return r.body.map((p: any) => p.title);
    };
    expect(await titles('tags=cs.%7Bnews%7D')).toEqual(['hello', 'second']);
    expect(await titles('tags=ov.%7Bmisc,intro%7D')).toEqual(['hello', 'bobs']);
    expect(await titles('tags=cd.%7Bnews,intro%7D')).toEqual(['hello', 'second', 'orphan']);
    expect(await titles('body=fts.fox')).toEqual(['hello', 'bobs']); // english stems foxes to fox
    expect(await titles('body=fts(simple).fox')).toEqual(['hello']);
    expect(await titles('body=wfts(english).jumping+fox')).toEqual(['bobs']);
    expect(await titles('body=phfts.quick+brown')).toEqual(['hello']);
    expect(await titles('title=like(any).%7Bh*,b*%7D')).toEqual(['hello', 'bobs']);
    expect(await titles('title=ilike.*O*&score=not.in.(1,9)')).toEqual(['hello', 'second']);
    expect(await titles('or=(score.gt.8,and(score.lt.4,title.eq.second))')).toEqual(['second', 'bobs']);
    expect(await titles('not.or=(score.gt.4,body.is.null)')).toEqual(['second']);
    expect(await titles('author_id=isdistinct.00000000-0000-0000-0000-0000000000a1')).toEqual(['bobs', 'orphan']);
    expect(await titles('title=match.%5Eh')).toEqual(['hello']);
    const r = await get(`${R}/posts?select=t:title,s:score::text,title&id=eq.1`);
    expect(r.body).toEqual([{ t: 'hello', s: '5', title: 'hello' }]);
    expect((await get(`${R}/posts?title=bogus.1`)).body).toMatchObject({ code: 'PGRST100', statusCode: 400 });
  });

  it('counts with Prefer and HEAD, pages with Range on both paths, refuses a bad Range with 416', async () => {
    for (const path of [`${R}/posts`, '/api/db/posts']) {
      let r = await get(`${path}?select=id&order=id`, { prefer: 'count=exact', range: '1-2' });
      // A counted partial page: PostgREST's 206 on /api/db, the spec's 200 on its primary path.
      expect(r.status).toBe(path === '/api/db/posts' ? 206 : 200);
      expect(r.body).toEqual([{ id: 2 }, { id: 3 }]);
      expect(r.headers.get('content-range')).toBe('1-2/4');
      r = await call(t, 'HEAD', `${path}?score=gt.2`, { headers: { ...admin(t), prefer: 'count=exact' } });
      expect(r.status).toBe(200);
      expect(r.text).toBe('');
      expect(r.headers.get('content-range')).toBe('0-2/3');
      r = await get(`${path}?select=id`, { range: 'items=x-1' });
      expect(r.status).toBe(416);
      expect(r.body).toMatchObject({ error: 'INVALID_RANGE', code: 'PGRST103' });
      expect(r.body.message).toContain('Range header');
      r = await get(`${path}?select=id`, { range: '10-20', prefer: 'count=exact' });
      expect(r.status).toBe(416);
      expect(r.headers.get('content-range')).toBe('*/4');
      // Uncounted (/api/db without Prefer: count, as PostgREST): no total, so nothing to refuse.
      r = await get(`${path}?select=id`, { range: '10-20' });
      expect(r.status).toBe(path === '/api/db/posts' ? 200 : 416);
      expect(r.headers.get('content-range')).toBe(path === '/api/db/posts' ? '*/*' : '*/4');
      r = await get(`${path}?select=id&order=id`, { range: '0-1' });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-range')).toBe(path === '/api/db/posts' ? '0-1/*' : '0-1/4');
    }
    const empty = await get(`${R}/posts?id=eq.999`, { prefer: 'count=exact' });
    expect(empty.headers.get('content-range')).toBe('*/0');
  });

  it('answers one object for vnd.pgrst.object+json, or 406 PGRST116', async () => {
    const accept = { accept: 'application/vnd.pgrst.object+json' };
    let r = await get(`${R}/posts?select=title&id=eq.1`, accept);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ title: 'hello' });
    r = await get(`${R}/posts?select=title&score=gt.0`, accept);
    expect(r.status).toBe(406);
    expect(r.body).toMatchObject({ error: 'NOT_SINGLE_ROW', code: 'PGRST116', details: 'The result contains 4 rows' });
    // A write that does not hit exactly one row is rolled back.
    r = await call(t, 'PATCH', `${R}/todos?id=gt.0`, {
      headers: { ...admin(t), ...accept, prefer: 'return=representation' },
      body: { n: 1 },
    });
    expect(r.status).toBe(406);
  });

  it('inserts with columns=, missing=default, return=minimal|headers-only, upserts, and tx=rollback', async () => {
    const h = { ...admin(t), prefer: 'return=representation' };
    let r = await call(t, 'POST', `${R}/todos?columns=%22title%22,%22n%22&select=title,done,n`, {
      headers: { ...h, prefer: 'return=representation, missing=default' },
      body: [
        { title: 'a', ignored: 1 },
        { title: 'b', n: 2 },
      ],
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toEqual([
      { title: 'a', done: false, n: null },
      { title: 'b', done: false, n: 2 },
    ]);
    r = await call(t, 'POST', `${R}/todos?columns=title,done`, { headers: h, body: [{ title: 'c' }] });
    expect(r.status).toBe(400); // without missing=default the missing "done" is null, and done is not null
    r = await call(t, 'POST', `${R}/todos`, {
      headers: { ...admin(t), prefer: 'return=minimal' },
      body: [{ title: 'd' }],
    });
    expect([r.status, r.text]).toEqual([201, '']);
    r = await call(t, 'POST', `/api/db/todos`, {
      headers: { ...admin(t), prefer: 'return=headers-only, count=exact' },
      body: { title: 'e' },
    });
    expect([r.status, r.text, r.headers.get('content-range')]).toEqual([201, '', '*/1']);
    r = await call(t, 'POST', `${R}/todos?on_conflict=title&select=title,n`, {
      headers: { ...admin(t), prefer: 'resolution=merge-duplicates, return=representation' },
      body: [
        { title: 'a', n: 7 },
        { title: 'f', n: 8 },
      ],
    });
    expect(r.body).toEqual([
      { title: 'a', n: 7 },
      { title: 'f', n: 8 },
    ]);
    r = await call(t, 'POST', `${R}/todos?on_conflict=title&select=title`, {
      headers: { ...admin(t), prefer: 'resolution=ignore-duplicates, return=representation' },
      body: [{ title: 'a' }],
    });
    expect(r.body).toEqual([]);
    r = await call(t, 'POST', `${R}/todos?select=title`, {
      headers: { ...h, prefer: 'return=representation, tx=rollback' },
      body: [{ title: 'ghost' }],
    });
    expect(r.body).toEqual([{ title: 'ghost' }]);
    expect((await get(`${R}/todos?title=eq.ghost`)).body).toEqual([]);
    r = await call(t, 'POST', `${R}/todos`, { headers: h, body: { title: 'single' } });
    expect(r.status).toBe(400);
    expect(r.body.message).toContain('wrap the row in [...]');
    r = await call(t, 'POST', `/api/db/todos?select=title`, {
      headers: { ...h, accept: 'application/vnd.pgrst.object+json' },
      body: { title: 'single' },
    });
    expect([r.status, r.body]).toEqual([201, { title: 'single' }]);
  });

  it('returns written rows through select (embeds too) on PATCH and DELETE; DELETE takes an empty JSON body', async () => {
    const h = { ...admin(t), prefer: 'return=representation' };
    let r = await call(t, 'PATCH', `${R}/posts?id=eq.2&select=title,author:profiles(name)`, {
      headers: h,
      body: { score: 4 },
    });
    expect(r.body).toEqual([{ title: 'second', author: { name: 'Ann' } }]);
    await sql(t, `insert into public.todos (title) values ('gone')`);
    const res = await call(t, 'DELETE', `${R}/todos?title=eq.gone&select=title`, {
      headers: { ...h, 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([{ title: 'gone' }]);
    r = await call(t, 'DELETE', `${R}/todos?title=eq.nothing`, {
      headers: { ...admin(t), 'content-type': 'application/json', prefer: 'count=exact' },
    });
    expect([r.status, r.headers.get('content-range')]).toEqual([204, '*/0']);
  });

  it('calls functions with POST, GET and HEAD on /api/database/rpc and /api/db/rpc', async () => {
    let r = await call(t, 'POST', '/api/database/rpc/add', { headers: admin(t), body: { a: 2, b: 3 } });
    expect([r.status, r.body]).toEqual([200, 5]);
    r = await get('/api/database/rpc/add?a=4&b=5');
    expect(r.body).toBe(9);
    r = await get('/api/db/rpc/titles?min_score=5');
    expect(r.body.map((p: any) => p.title)).toEqual(['hello', 'bobs']);
    r = await call(t, 'HEAD', '/api/database/rpc/titles', { headers: admin(t) });
    expect([r.status, r.text]).toEqual([200, '']);
    r = await get('/api/database/rpc/nope');
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ error: 'RPC_NOT_FOUND', code: 'PGRST202' });
  });

  it('applies RLS to embedded tables: a user sees only their own comments under a post', async () => {
    for (const [u, body] of [
      [a, 'from a'],
      [b, 'from b'],
    ] as const) {
      const r = await call(t, 'POST', `${R}/comments`, { headers: u.auth, body: [{ post_id: 3, body }] });
      expect(r.status, r.text).toBe(201);
    }
    const seen = async (u: User) =>
      (await call(t, 'GET', `${R}/posts?select=title,comments(body)&id=eq.3`, { headers: u.auth })).body;
    expect(await seen(a)).toEqual([{ title: 'bobs', comments: [{ body: 'from a' }] }]);
    expect(await seen(b)).toEqual([{ title: 'bobs', comments: [{ body: 'from b' }] }]);
    const anon = await call(t, 'GET', `${R}/posts?select=title,comments!inner(body)`, {
      headers: { authorization: `Bearer ${t.anonKey}` },
    });
    expect([anon.status, anon.body]).toEqual([200, []]);
  });

  it('explains an RLS refusal by the table policy, not by the admin key', async () => {
    let r = await call(t, 'POST', `${R}/locked`, { headers: a.auth, body: [{ owner: b.userId, body: 'x' }] });
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ error: 'FORBIDDEN', code: '42501' });
    expect(r.body.message).toContain('row-level security policies of table "locked"');
    expect(r.body.message).toContain('"own_locked"');
    expect(r.body.message).toContain('WITH CHECK');
    expect(r.body.nextActions).not.toContain('admin API key');
    r = await call(t, 'POST', `${R}/nopolicy`, { headers: a.auth, body: [{ body: 'x' }] });
    expect(r.status).toBe(403);
    expect(r.body.message).toContain('no policy for INSERT');
    expect(r.body.hint).toContain('no policy for this command');
    expect((await get(`${R}/locked`)).body).toEqual([]);
    void ANN;
  });

  it('answers an invalid or expired token on database routes with code PGRST301 (the SDK refreshes on it)', async () => {
    const r = await call(t, 'GET', `${R}/posts`, {
      headers: { authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl' },
    });
    expect(r.status).toBe(401);
    envelope(r);
    expect(r.body).toMatchObject({ error: 'INVALID_TOKEN', code: 'PGRST301', details: null, hint: null });
    // Other areas keep the plain envelope.
    const other = await call(t, 'GET', '/api/auth/user', {
      headers: { authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl' },
    });
    expect(other.status).toBe(401);
    expect(other.body.code).toBeUndefined();
  });
});
