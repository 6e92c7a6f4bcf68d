// PostgREST's error texts where Postgres or its schema cache speak (issue 37, the rest), through
// the real @supabase/postgrest-js on both backends, beside Plinth's envelope: constraint
// violations with Postgres's own message and DETAIL, PGRST202's guess at the function meant,
// a name embedded twice, a missing column inside an embed, a spread inside a nested embed and
// an aggregate of a computed field. Written from PostgREST's documentation and behaviour.
import type { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { call } from '../helpers/http.js';
import { admin } from '../database/helpers.js';
import { postgrestServer } from './helpers.js';

const FIXTURE = [
  `create table public.users (username text primary key, status text)`,
  `create table public.channels (id int primary key, slug text unique, owner text references public.users)`,
  `create table public.messages (id int primary key, message text, username text not null references public.users, channel_id int)`,
  `create table public.message_meta (id int primary key references public.messages, created_at date, channel int references public.channels)`,
  `create table public.best_friends (id int primary key, first_user text references public.users, second_user text references public.users)`,
  `create table public.books (id int primary key, title text, pages int, chapters int, check (pages > 0))`,
  `create function public.page_count(b public.books) returns int language sql stable as $$ select b.pages * 2 $$`,
  `create function public.get_status(name_param text) returns text language sql stable as $$ select status from public.users where username = name_param $$`,
  `create function public.get_username_and_status(name_param text) returns text language sql stable as $$ select name_param $$`,
  `create function public.echo_text(text) returns text language sql as $$ select $1 $$`,
  `insert into public.users values ('ann', 'ONLINE'), ('bob', 'OFFLINE')`,
  `insert into public.channels values (1, 'public', 'ann'), (2, 'random', 'bob')`,
  `insert into public.messages values (1, 'hi', 'ann', 1), (2, 'yo', 'ann', 2), (3, 'hey', 'bob', 1)`,
  `insert into public.message_meta values (1, '2024-01-01', 1), (2, '2024-01-02', 2)`,
  `insert into public.best_friends values (1, 'ann', 'bob')`,
  `insert into public.books values (1, 'x', 100, 3), (2, 'y', 50, 2)`,
];

/** The envelope stays beside PostgREST's fields on every error of /api/db. */
const envelope = (e: any, error: string, statusCode: number) => {
  expect([e.error, e.statusCode, typeof e.nextActions]).toEqual([error, statusCode, 'string']);
};

describe.each(backends())("postgrest-js: PostgREST's error texts (%s)", (backend) => {
  let t: TestApp;
  let db: PostgrestClient;

  beforeAll(async () => {
    ({ t, db } = await postgrestServer(backend, FIXTURE));
  });
  afterAll(async () => {
    await t?.close();
  });

  it("answers a unique violation 409 with Postgres's message and DETAIL, code 23505, hint null", async () => {
    const r: any = await db.from('users').insert({ username: 'ann' });
    expect([r.status, r.error.code, r.error.message, r.error.details, r.error.hint]).toEqual([
      409,
      '23505',
      'duplicate key value violates unique constraint "users_pkey"',
      'Key (username)=(ann) already exists.',
      null,
    ]);
    envelope(r.error, 'ALREADY_EXISTS', 409);
    // The primary path keeps Plinth's own wording (the spec's envelope, its message).
    const primary = await call(t, 'POST', '/api/database/records/users', {
      headers: admin(t),
      body: [{ username: 'ann' }],
    });
    expect([primary.status, primary.body.code, primary.body.message]).toEqual([
      409,
      '23505',
      'A row with the same unique value already exists (constraint "users_pkey").',
    ]);
  });

  it("answers the other constraint violations with Postgres's text: 409 for a missing reference, 400 for null and check", async () => {
    let r: any = await db.from('messages').insert({ id: 9, message: 'x', username: 'nobody' });
    expect([r.status, r.error.code, r.error.message, r.error.details, r.error.hint]).toEqual([
      409,
      '23503',
      'insert or update on table "messages" violates foreign key constraint "messages_username_fkey"',
      'Key (username)=(nobody) is not present in table "users".',
      null,
    ]);
    envelope(r.error, 'CONFLICT', 409);
    r = await db.from('users').delete().eq('username', 'bob');
    expect([r.status, r.error.code, r.error.message]).toEqual([
      409,
      '23503',
      'update or delete on table "users" violates foreign key constraint "channels_owner_fkey" on table "channels"',
    ]);
    expect(r.error.details).toBe('Key (username)=(bob) is still referenced from table "channels".');
    r = await db.from('messages').insert({ id: 9, message: 'x' });
    expect([r.status, r.error.code, r.error.message]).toEqual([
      400,
      '23502',
      'null value in column "username" of relation "messages" violates not-null constraint',
    ]);
    expect(r.error.details).toMatch(/^Failing row contains \(9, x, null, null\)\.$/);
    r = await db.from('books').update({ pages: 0 }).eq('id', 1);
    expect([r.status, r.error.code, r.error.message]).toEqual([
      400,
      '23514',
      'new row for relation "books" violates check constraint "books_pages_check"',
    ]);
    envelope(r.error, 'INVALID_INPUT', 400);
  });

  it('hints at the function meant for PGRST202: the closest name when none has it, else the closest parameters', async () => {
    let r: any = await db.rpc('get_statuss', { name_param: 'ann' });
    expect([r.status, r.error.code, r.error.message, r.error.details, r.error.hint]).toEqual([
      404,
      'PGRST202',
      'Could not find the function public.get_statuss(name_param) in the schema cache',
      'Searched for the function public.get_statuss with parameter name_param or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.',
      'Perhaps you meant to call the function public.get_status',
    ]);
    envelope(r.error, 'RPC_NOT_FOUND', 404);
    // An unnamed argument the function does not take: the name is guessed among callable functions.
    r = await db.rpc('echo_texts', { '': 'a' });
    expect([r.error.message, r.error.hint]).toEqual([
      'Could not find the function public.echo_texts() in the schema cache',
      'Perhaps you meant to call the function public.echo_text',
    ]);
    r = await db.rpc('get_status', { name_parameter: 'ann' });
    expect(r.error.hint).toBe('Perhaps you meant to call the function public.get_status(name_param)');
    // Nothing close enough (at least 0.75 alike): no hint.
    r = await db.rpc('completely_other', { x: 1 });
    expect([r.status, r.error.hint]).toEqual([404, null]);
  });

  it("answers a relation embedded twice under one name with Postgres's 42712 and PostgREST's alias", async () => {
    const r: any = await db.from('best_friends').select('users!first_user(*), users!second_user(*)').limit(1).single();
    expect([r.status, r.error.code, r.error.message, r.error.details, r.error.hint]).toEqual([
      400,
      '42712',
      'table name "best_friends_users_1" specified more than once',
      null,
      null,
    ]);
    const ok: any = await db.from('best_friends').select('a:users!first_user(username), b:users!second_user(username)');
    expect(ok.data).toEqual([{ a: { username: 'ann' }, b: { username: 'bob' } }]);
  });

  it("answers a missing column inside an embed with 42703 naming PostgREST's alias of the embed", async () => {
    let r: any = await db.from('users').select('username, messages(sum)').limit(1).single();
    expect([r.status, r.error.code, r.error.message, r.error.details, r.error.hint]).toEqual([
      400,
      '42703',
      'column messages_1.sum does not exist',
      null,
      null,
    ]);
    r = await db.from('users').select('username, messages(missing.sum())');
    expect([r.status, r.error.code, r.error.message]).toEqual([
      400,
      '42703',
      'column messages_1.missing does not exist',
    ]);
    // At the top level the table keeps its name.
    r = await db.from('users').select('missing_column');
    expect(r.error.message).toBe('column users.missing_column does not exist');
  });

  it('spreads a to-one relation inside a nested embed, with !inner and an alias below it', async () => {
    const r: any = await db
      .from('users')
      .select('username, msgs:messages(id, ...message_meta(created_at, channel!inner(id, slug, owner:users(*))))')
      .eq('username', 'ann');
    expect(r.error).toBeNull();
    r.data[0].msgs.sort((a: any, b: any) => a.id - b.id);
    expect(r.data).toEqual([
      {
        username: 'ann',
        msgs: [
          {
            id: 1,
            created_at: '2024-01-01',
            channel: { id: 1, slug: 'public', owner: { username: 'ann', status: 'ONLINE' } },
          },
          {
            id: 2,
            created_at: '2024-01-02',
            channel: { id: 2, slug: 'random', owner: { username: 'bob', status: 'OFFLINE' } },
          },
        ],
      },
    ]);
  });

  it("answers a spread of a relation that does not exist inside a nested embed with PGRST200 and PostgREST's text", async () => {
    const r: any = await db
      .from('users')
      .select('msgs:messages(id, ...message_details(created_at, channel!inner(id, slug, owner:users(*))))')
      .limit(1)
      .single();
    expect([r.status, r.error.code, r.error.message, r.error.details, r.error.hint]).toEqual([
      400,
      'PGRST200',
      "Could not find a relationship between 'messages' and 'message_details' in the schema cache",
      "Searched for a foreign key relationship between 'messages' and 'message_details' in the schema 'public', but no matches were found.",
      null,
    ]);
    envelope(r.error, 'RELATION_NOT_FOUND', 400);
  });

  it('aggregates a computed field (a function of the row), alone and grouped', async () => {
    let r: any = await db.from('books').select('page_count.sum()');
    expect([r.error, r.data]).toEqual([null, [{ sum: 300 }]]);
    r = await db.from('books').select('title, total:page_count.max()').order('title');
    expect(r.data).toEqual([
      { title: 'x', total: 200 },
      { title: 'y', total: 100 },
    ]);
    r = await db.from('books').select('page_count.avg()::int, chapters.sum()');
    expect(r.data).toEqual([{ avg: 150, sum: 5 }]);
  });
});
