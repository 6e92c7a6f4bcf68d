-- Identity helpers for RLS policies and the core auth tables.
create schema if not exists auth;
grant usage on schema auth to anon, authenticated;

-- The claims of the current request, set transaction-locally by the records layer.
create or replace function auth.jwt() returns jsonb
  language sql stable
  as $$ select coalesce(nullif(current_setting('request.jwt.claims', true), ''), '{}')::jsonb $$;

create or replace function auth.uid() returns uuid
  language sql stable
  as $$ select nullif(auth.jwt() ->> 'sub', '')::uuid $$;

create or replace function auth.role() returns text
  language sql stable
  as $$ select coalesce(auth.jwt() ->> 'role', current_user::text) $$;

create or replace function auth.email() returns text
  language sql stable
  as $$ select auth.jwt() ->> 'email' $$;

grant execute on function auth.jwt(), auth.uid(), auth.role(), auth.email() to anon, authenticated;

create table if not exists auth.users (
  id uuid primary key default gen_random_uuid(),
  email text not null unique,
  password_hash text not null,
  email_verified boolean not null default false,
  profile jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table if not exists auth.sessions (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references auth.users (id) on delete cascade,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  revoked_at timestamptz
);
create index if not exists sessions_user_id_idx on auth.sessions (user_id);
