// Embedding resolved as PostgREST does (issue 26, item 4), through the real postgrest-js on both
// backends: many-to-many through a junction, views through their base tables' keys, empty
// embeds that only filter, !inner/!left, self references by hint, ambiguity as 300 PGRST201,
// computed relationships (functions of the row type returning rows).
import type { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { postgrestServer } from './helpers.js';

const FIXTURE = [
  `create table public.users (id int primary key, name text not null)`,
  `create table public.roles (id int primary key, name text not null)`,
  `create table public.user_roles (user_id int references public.users(id), role_id int references public.roles(id), primary key (user_id, role_id))`,
  `create table public.articles (id int primary key, user_id int references public.users(id), title text not null)`,
  `create view public.articles_v as select id, user_id, title from public.articles`,
  `create table public.tasks (id int primary key, name text not null, parent_id int references public.tasks(id))`,
  `create table public.letters (id int primary key, sender_id int references public.users(id), receiver_id int references public.users(id), body text)`,
  `create function public.authored(u public.users) returns setof public.articles language sql stable as $$ select * from public.articles where user_id = u.id $$`,
  `create function public.author_of(a public.articles) returns public.users language sql stable as $$ select * from public.users where id = a.user_id $$`,
  `insert into public.users values (1, 'Ann'), (2, 'Bob'), (3, 'Cy')`,
  `insert into public.roles values (1, 'admin'), (2, 'editor')`,
  `insert into public.user_roles values (1, 1), (1, 2), (2, 2)`,
  `insert into public.articles values (1, 1, 'a1'), (2, 1, 'a2'), (3, 2, 'b1')`,
  `insert into public.tasks values (1, 'root', null), (2, 'child', 1), (3, 'leaf', 2)`,
  `insert into public.letters values (1, 1, 2, 'hi bob')`,
];

describe.each(backends())('postgrest-js: embedding resolution (%s)', (backend) => {
  let t: TestApp;
  let db: PostgrestClient;

  beforeAll(async () => {
    ({ t, db } = await postgrestServer(backend, FIXTURE));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('embeds many-to-many through a junction table, both ways and by the junction as hint', async () => {
    let r: any = await db
      .from('users')
      .select('name, roles(name)')
      .order('id')
      .order('id', { referencedTable: 'roles' });
    expect([r.error, r.data]).toEqual([
      null,
      [
        { name: 'Ann', roles: [{ name: 'admin' }, { name: 'editor' }] },
        { name: 'Bob', roles: [{ name: 'editor' }] },
        { name: 'Cy', roles: [] },
      ],
    ]);
    r = await db
      .from('roles')
      .select('name, users!user_roles(name)')
      .eq('name', 'editor')
      .order('id', { referencedTable: 'users' });
    expect(r.data).toEqual([{ name: 'editor', users: [{ name: 'Ann' }, { name: 'Bob' }] }]);
    r = await db.from('users').select('name, roles!inner(name)').eq('roles.name', 'admin');
    expect(r.data).toEqual([{ name: 'Ann', roles: [{ name: 'admin' }] }]);
  });

  it('embeds views through the keys of their base tables', async () => {
    let r: any = await db.from('articles_v').select('title, users(name)').order('id');
    expect([r.error, r.data]).toEqual([
      null,
      [
        { title: 'a1', users: { name: 'Ann' } },
        { title: 'a2', users: { name: 'Ann' } },
        { title: 'b1', users: { name: 'Bob' } },
      ],
    ]);
    r = await db.from('users').select('name, articles_v(title)').eq('id', 2);
    expect(r.data).toEqual([{ name: 'Bob', articles_v: [{ title: 'b1' }] }]);
  });

  it('filters by an empty embed without showing it, and takes !left and !inner', async () => {
    let r: any = await db.from('articles').select('title, users!inner()').eq('users.name', 'Bob');
    expect([r.error, r.data]).toEqual([null, [{ title: 'b1' }]]);
    r = await db.from('users').select('name, articles()').not('articles', 'is', null).order('id');
    expect(r.data).toEqual([{ name: 'Ann' }, { name: 'Bob' }]);
    r = await db.from('users').select('name, articles!left(title)').eq('articles.title', 'a2').order('id');
    expect(r.data).toEqual([
      { name: 'Ann', articles: [{ title: 'a2' }] },
      { name: 'Bob', articles: [] },
      { name: 'Cy', articles: [] },
    ]);
  });

  it('tells parent from children of a self reference as PostgREST: the key column is the parent, the table the children', async () => {
    let r: any = await db.from('tasks').select('name, parent:parent_id(name), children:tasks(name)').order('id');
    expect(r.data).toEqual([
      { name: 'root', parent: null, children: [{ name: 'child' }] },
      { name: 'child', parent: { name: 'root' }, children: [{ name: 'leaf' }] },
      { name: 'leaf', parent: { name: 'child' }, children: [] },
    ]);
    // `!<key column>` and `!<constraint>` name the referencing rows too.
    r = await db.from('tasks').select('name, parent:parent_id(name), children:tasks!parent_id(name)').order('id');
    expect(r.data[0]).toEqual({ name: 'root', parent: null, children: [{ name: 'child' }] });
    r = await db
      .from('tasks')
      .select('name, parent:parent_id(name), children:tasks!tasks_parent_id_fkey(name)')
      .order('id');
    expect(r.data).toEqual([
      { name: 'root', parent: null, children: [{ name: 'child' }] },
      { name: 'child', parent: { name: 'root' }, children: [{ name: 'leaf' }] },
      { name: 'leaf', parent: { name: 'child' }, children: [] },
    ]);
  });

  it('answers an ambiguous embed with 300 PGRST201 listing the candidates, and resolves it by hint', async () => {
    const amb: any = await db.from('letters').select('body, users(name)');
    expect([amb.status, amb.error?.code]).toEqual([300, 'PGRST201']);
    // PostgREST's details: the candidates as a list.
    expect(amb.error.details.map((d: any) => d.relationship)).toEqual([
      'letters_receiver_id_fkey using letters(receiver_id) and users(id)',
      'letters_sender_id_fkey using letters(sender_id) and users(id)',
    ]);
    expect(amb.error.hint).toContain('users!letters_receiver_id_fkey');
    const r: any = await db
      .from('letters')
      .select('body, from:users!sender_id(name), to:users!letters_receiver_id_fkey(name)');
    expect(r.data).toEqual([{ body: 'hi bob', from: { name: 'Ann' }, to: { name: 'Bob' } }]);
  });

  it('embeds computed relationships: a function of the row type returning rows (setof: array, one: object)', async () => {
    let r: any = await db
      .from('users')
      .select('name, written:authored(title)')
      .eq('id', 1)
      .order('id', { referencedTable: 'written', ascending: false });
    expect([r.error, r.data]).toEqual([null, [{ name: 'Ann', written: [{ title: 'a2' }, { title: 'a1' }] }]]);
    r = await db.from('articles').select('title, author_of(name)').eq('id', 3);
    expect(r.data).toEqual([{ title: 'b1', author_of: { name: 'Bob' } }]);
    r = await db.from('users').select('name, authored!inner(title)').eq('authored.title', 'a2');
    expect(r.data).toEqual([{ name: 'Ann', authored: [{ title: 'a2' }] }]);
  });
});
