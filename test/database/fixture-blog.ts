import type { TestApp } from '../helpers/app.js';
import { sql } from './helpers.js';

/**
 * A small blog schema for the PostgREST tests: profiles ← posts ← comments (comments under
 * RLS: each user sees only their own), reviews with two keys to profiles (ambiguous), todos.
 */
export async function blogSchema(t: TestApp): Promise<void> {
  const statements = [
    `create table public.profiles (id uuid primary key default gen_random_uuid(), name text not null, org text)`,
    `create table public.posts (id serial primary key, title text not null, author_id uuid references public.profiles(id), score int, tags text[], body text)`,
    `create table public.comments (id serial primary key, post_id int not null references public.posts(id) on delete cascade, body text not null, owner uuid default auth.uid())`,
    `create table public.reviews (id serial primary key, reviewer_id uuid references public.profiles(id), subject_id uuid references public.profiles(id), stars int)`,
    `create table public.todos (id serial primary key, title text not null unique, done boolean not null default false, n int)`,
    `create table public.settings (profile_id uuid primary key references public.profiles(id), theme text)`,
    `create table public.emp (id int primary key, name text not null, boss int references public.emp(id))`,
    `create table public.locked (id serial primary key, owner uuid not null default auth.uid(), body text)`,
    `create table public.nopolicy (id serial primary key, body text)`,
    `grant select, insert, update, delete on all tables in schema public to anon, authenticated`,
    `grant usage on all sequences in schema public to anon, authenticated`,
    `alter table public.comments enable row level security`,
    `create policy own_comments on public.comments for all to authenticated using (owner = auth.uid()) with check (owner = auth.uid())`,
    `alter table public.locked enable row level security`,
    `create policy own_locked on public.locked for all to authenticated using (owner = auth.uid()) with check (owner = auth.uid())`,
    `alter table public.nopolicy enable row level security`,
    `create function public.add(a int, b int) returns int language sql immutable as $$ select a + b $$`,
    `create function public.titles(min_score int default 0) returns setof public.posts language sql stable as $$ select * from public.posts where score >= min_score order by id $$`,
    `insert into public.profiles (id, name, org) values ('00000000-0000-0000-0000-0000000000a1', 'Ann', 'acme'), ('00000000-0000-0000-0000-0000000000b2', 'Bob', 'acme'), ('00000000-0000-0000-0000-0000000000c3', 'Cy', null)`,
    `insert into public.posts (title, author_id, score, tags, body) values
       ('hello', '00000000-0000-0000-0000-0000000000a1', 5, '{intro,news}', 'the quick brown fox'),
       ('second', '00000000-0000-0000-0000-0000000000a1', 3, '{news}', 'lazy dogs sleep'),
       ('bobs', '00000000-0000-0000-0000-0000000000b2', 9, '{misc}', 'jumping foxes'),
       ('orphan', null, 1, '{}', null)`,
    `insert into public.settings (profile_id, theme) values ('00000000-0000-0000-0000-0000000000a1', 'dark')`,
    `insert into public.emp values (1, 'chief', null), (2, 'dev', 1), (3, 'ops', 1)`,
    `insert into public.reviews (reviewer_id, subject_id, stars) values ('00000000-0000-0000-0000-0000000000a1', '00000000-0000-0000-0000-0000000000b2', 4)`,
  ];
  for (const s of statements) await sql(t, s);
}

export const ANN = '00000000-0000-0000-0000-0000000000a1';
export const BOB = '00000000-0000-0000-0000-0000000000b2';
