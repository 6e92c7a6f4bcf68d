// The real @supabase/postgrest-js client against a real Plinth over HTTP, on both backends:
// pointed at /api/db (its table URLs are <url>/<table>, its RPC URLs <url>/rpc/<fn>).
import { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { blogSchema } from '../database/fixture-blog.js';

type User = Awaited<ReturnType<typeof createTestUser>>;

describe.each(backends())('@supabase/postgrest-js against Plinth (%s)', (backend) => {
  let t: TestApp;
  let a: User;
  let b: User;
  let db: PostgrestClient;
  const as = (token: string) =>
    new PostgrestClient(`${t.url}/api/db`, { headers: { Authorization: `Bearer ${token}` } });

  beforeAll(async () => {
    t = await startApp(backend);
    await blogSchema(t);
    a = await createTestUser(t);
    b = await createTestUser(t);
    db = as(t.adminKey);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('selects with many-to-one, one-to-many, nested and !inner embeds', async () => {
    let r: any = await db.from('posts').select('id, title, author:profiles(name)').order('id');
    expect(r.error).toBeNull();
    expect(r.data).toEqual([
      { id: 1, title: 'hello', author: { name: 'Ann' } },
      { id: 2, title: 'second', author: { name: 'Ann' } },
      { id: 3, title: 'bobs', author: { name: 'Bob' } },
      { id: 4, title: 'orphan', author: null },
    ]);
    const p = await db
      .from('profiles')
      .select('name, posts(title, score)')
      .order('name')
      .order('score', { referencedTable: 'posts', ascending: false })
      .limit(1, { referencedTable: 'posts' });
    expect(p.data).toEqual([
      { name: 'Ann', posts: [{ title: 'hello', score: 5 }] },
      { name: 'Bob', posts: [{ title: 'bobs', score: 9 }] },
      { name: 'Cy', posts: [] },
    ]);
    r = await db.from('posts').select('title, author:profiles!inner(name, org)').eq('author.name', 'Bob');
    expect(r.data).toEqual([{ title: 'bobs', author: { name: 'Bob', org: 'acme' } }]);
    const nested = await db.from('reviews').select('stars, reviewer:profiles!reviewer_id(name, posts(title))');
    expect(nested.error).toBeNull();
    expect(nested.data).toEqual([
      { stars: 4, reviewer: { name: 'Ann', posts: [{ title: 'hello' }, { title: 'second' }] } },
    ]);
    const amb = await db.from('profiles').select('name, reviews(stars)');
    expect(amb.status).toBe(300);
    expect(amb.error).toMatchObject({ code: 'PGRST201' });
  });

  it('filters, orders and pages like PostgREST', async () => {
    const r = await db
      .from('posts')
      .select('title', { count: 'exact' })
      .or('score.gt.4,title.eq.second')
      .not('author_id', 'is', null)
      .ilike('title', '%e%')
      .in('score', [3, 5, 9])
      .order('score', { ascending: false, nullsFirst: false })
      .range(0, 1);
    expect(r.error).toBeNull();
    expect(r.data).toEqual([{ title: 'hello' }, { title: 'second' }]);
    expect(r.count).toBe(2);
    const tags = await db.from('posts').select('title').contains('tags', ['news']).overlaps('tags', ['intro']);
    expect(tags.data).toEqual([{ title: 'hello' }]);
    const fts = await db.from('posts').select('title').textSearch('body', 'quick & fox', { config: 'english' });
    expect(fts.data).toEqual([{ title: 'hello' }]);
    const likeAny = await db.from('posts').select('title').likeAnyOf('title', ['h%', 'o%']).order('id');
    expect(likeAny.data).toEqual([{ title: 'hello' }, { title: 'orphan' }]);
  });

  it('counts with head: true, and single / maybeSingle', async () => {
    const head = await db.from('posts').select('*', { count: 'exact', head: true }).gt('score', 2);
    expect([head.status, head.data, head.count, head.error]).toEqual([200, null, 3, null]);
    const one = await db.from('posts').select('title, author:profiles(name)').eq('id', 3).single();
    expect(one.data).toEqual({ title: 'bobs', author: { name: 'Bob' } });
    const many = await db.from('posts').select('title').single();
    expect(many.status).toBe(406);
    expect(many.error).toMatchObject({ code: 'PGRST116' });
    const none = await db.from('posts').select('title').eq('id', 999).maybeSingle();
    expect([none.data, none.error]).toEqual([null, null]);
  });

  it('inserts, upserts, updates and deletes with returning rows', async () => {
    const r = await db.from('todos').insert({ title: 'one' }).select().single();
    expect(r.error).toBeNull();
    expect(r.data).toMatchObject({ title: 'one', done: false });
    const arr = await db
      .from('todos')
      .insert([{ title: 'two' }, { title: 'three', done: true }], { defaultToNull: false })
      .select('title, done');
    expect(arr.data).toEqual([
      { title: 'two', done: false },
      { title: 'three', done: true },
    ]);
    const minimal = await db.from('todos').insert({ title: 'four' });
    expect([minimal.status, minimal.data, minimal.error]).toEqual([201, null, null]);
    const up = await db
      .from('todos')
      .upsert(
        [
          { title: 'one', n: 1 },
          { title: 'five', n: 5 },
        ],
        { onConflict: 'title' },
      )
      .select('title, n');
    expect(up.data).toEqual([
      { title: 'one', n: 1 },
      { title: 'five', n: 5 },
    ]);
    const ign = await db
      .from('todos')
      .upsert({ title: 'one', n: 99 }, { onConflict: 'title', ignoreDuplicates: true })
      .select();
    expect(ign.data).toEqual([]);
    const upd = await db
      .from('todos')
      .update({ done: true }, { count: 'exact' })
      .in('title', ['one', 'two'])
      .select('title, done');
    expect(upd.data).toEqual(
      expect.arrayContaining([
        { title: 'one', done: true },
        { title: 'two', done: true },
      ]),
    );
    expect(upd.count).toBe(2);
    const del = await db.from('todos').delete().eq('title', 'four');
    expect([del.status, del.error]).toEqual([204, null]);
    const delSel = await db.from('todos').delete().eq('title', 'five').select('title').maybeSingle();
    expect(delSel.data).toEqual({ title: 'five' });
    const left = await db.from('todos').select('title').order('title');
    expect(left.data).toEqual([{ title: 'one' }, { title: 'three' }, { title: 'two' }]);
  });

  it('calls functions with rpc (POST, get and head)', async () => {
    expect((await db.rpc('add', { a: 1, b: 2 })).data).toBe(3);
    expect((await db.rpc('add', { a: 5, b: 6 }, { get: true })).data).toBe(11);
    const set = await db.rpc('titles', { min_score: 5 }, { get: true });
    expect(set.data.map((p: any) => p.title)).toEqual(['hello', 'bobs']);
    const head = await db.rpc('titles', {}, { head: true });
    expect([head.status, head.data]).toEqual([200, null]);
    const other = await db.schema('private').from('posts').select('*');
    expect([other.status, other.error?.code]).toEqual([406, 'PGRST106']);
    const missing = await db.rpc('nope');
    expect([missing.status, missing.error?.code]).toEqual([404, 'PGRST202']);
  });

  it("applies RLS to every embedded table: a user never sees another user's comments", async () => {
    for (const [u, body] of [
      [a, 'mine-a'],
      [b, 'mine-b'],
    ] as const) {
      const r = await as(u.token).from('comments').insert({ post_id: 1, body });
      expect(r.error).toBeNull();
    }
    const seen = async (u: User) =>
      (await as(u.token).from('posts').select('title, comments(body)').eq('id', 1).single()).data;
    expect(await seen(a)).toEqual({ title: 'hello', comments: [{ body: 'mine-a' }] });
    expect(await seen(b)).toEqual({ title: 'hello', comments: [{ body: 'mine-b' }] });
    const inner = await as(a.token).from('posts').select('title, comments!inner(body)');
    expect(inner.data).toEqual([{ title: 'hello', comments: [{ body: 'mine-a' }] }]);
    const refused = await as(a.token).from('locked').insert({ owner: b.userId });
    expect(refused.status).toBe(403);
    expect(refused.error).toMatchObject({ code: '42501' });
    expect(refused.error?.message).toContain('row-level security policies of table "locked"');
  });
});
