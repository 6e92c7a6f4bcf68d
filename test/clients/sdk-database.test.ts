// @insforge/sdk's client.database (postgrest-js inside, on /api/database/records and
// /api/database/rpc) against a real Plinth over HTTP, with a user token set the SDK's way.
import { createClient } from '@insforge/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { blogSchema } from '../database/fixture-blog.js';

type User = Awaited<ReturnType<typeof createTestUser>>;

describe.each(backends())('@insforge/sdk client.database against Plinth (%s)', (backend) => {
  let t: TestApp;
  let a: User;
  let b: User;
  /** A client signed in as `u` through client.setAccessToken (what apps with their own sign-in flow do). */
  const clientFor = (u: User) => {
    const client = createClient({ baseUrl: t.url, anonKey: t.anonKey });
    client.setAccessToken(u.token);
    return client;
  };

  beforeAll(async () => {
    t = await startApp(backend);
    await blogSchema(t);
    a = await createTestUser(t);
    b = await createTestUser(t);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('reads with embedding, embedded filters and order, counts and HEAD', async () => {
    const db = clientFor(a).database;
    let r: any = await db
      .from('posts')
      .select('title, author:profiles(name)', { count: 'exact' })
      .order('id')
      .range(0, 1);
    expect(r.error).toBeNull();
    expect(r.data).toEqual([
      { title: 'hello', author: { name: 'Ann' } },
      { title: 'second', author: { name: 'Ann' } },
    ]);
    expect(r.count).toBe(4);
    r = await db.from('profiles').select('name, posts!inner(title)').eq('posts.title', 'bobs');
    expect(r.data).toEqual([{ name: 'Bob', posts: [{ title: 'bobs' }] }]);
    const head = await db.from('posts').select('*', { count: 'exact', head: true }).lt('score', 5);
    expect([head.status, head.count, head.data]).toEqual([200, 2, null]);
    const one = await db.from('profiles').select('name, posts(title)').eq('name', 'Bob').single();
    expect(one.data).toEqual({ name: 'Bob', posts: [{ title: 'bobs' }] });
    const maybe = await db.from('profiles').select('name').eq('name', 'Nobody').maybeSingle();
    expect([maybe.data, maybe.error]).toEqual([null, null]);
  });

  it('writes: array inserts with columns=, upsert, update and delete with select; a single-object insert is told to wrap it', async () => {
    const db = clientFor(a).database;
    const single = await db.from('comments').insert({ post_id: 1, body: 'x' });
    expect(single.status).toBe(400);
    expect(single.error?.message).toContain('wrap the row in [...]');
    const ins = await db
      .from('comments')
      .insert(
        [
          { post_id: 1, body: 'first' },
          { post_id: 2, body: 'second' },
        ],
        { defaultToNull: false },
      )
      .select('body, post:posts(title)');
    expect(ins.error).toBeNull();
    expect(ins.data).toEqual([
      { body: 'first', post: { title: 'hello' } },
      { body: 'second', post: { title: 'second' } },
    ]);
    const upd = await db.from('comments').update({ body: 'first!' }).eq('body', 'first').select('body').single();
    expect(upd.data).toEqual({ body: 'first!' });
    const up = await db
      .from('todos')
      .upsert([{ title: 'u', n: 1 }], { onConflict: 'title' })
      .select('title, n');
    expect(up.data).toEqual([{ title: 'u', n: 1 }]);
    const del = await db.from('comments').delete().eq('body', 'second');
    expect([del.status, del.error]).toEqual([204, null]);
    const mine = await db.from('comments').select('body').order('id');
    expect(mine.data).toEqual([{ body: 'first!' }]);
    // RLS through embedding: b sees the post but none of a's comments under it.
    const seenByB = await clientFor(b).database.from('posts').select('title, comments(body)').eq('id', 1).single();
    expect(seenByB.data).toEqual({ title: 'hello', comments: [] });
  });

  it('calls rpc on /api/database/rpc (POST and GET) and reads PostgREST error codes', async () => {
    const db = clientFor(a).database;
    expect((await db.rpc('add', { a: 20, b: 22 })).data).toBe(42);
    const set = await db.rpc('titles', { min_score: 9 }, { get: true });
    expect(set.data).toEqual([expect.objectContaining({ title: 'bobs' })]);
    const bad = await db.from('profiles').select('name, reviews(stars)');
    expect([bad.status, bad.error?.code]).toEqual([300, 'PGRST201']); // PostgREST's 300, on both paths
    const refused = await db.from('locked').insert([{ owner: b.userId }]);
    expect([refused.status, refused.error?.code]).toEqual([403, '42501']);
  });
});
