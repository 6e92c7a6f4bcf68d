-- Auth: refresh tokens (opaque, stored as SHA-256), one-time email codes, and lookups the
-- auth module needs. Columns added to 0002's tables all have defaults.

-- Sessions: when the session was last refreshed and from where it was opened (for admins).
alter table auth.sessions add column if not exists refreshed_at timestamptz;
alter table auth.sessions add column if not exists ip text;
alter table auth.sessions add column if not exists user_agent text;

-- Each refresh token is used once: rotation marks it used and inserts its successor.
-- Presenting a used token again revokes the whole session (token theft detection).
create table if not exists auth.refresh_tokens (
  token_hash text primary key,
  session_id uuid not null references auth.sessions (id) on delete cascade,
  created_at timestamptz not null default now(),
  used_at timestamptz
);
create index if not exists refresh_tokens_session_id_idx on auth.refresh_tokens (session_id);

-- One live code per user and purpose; a new code replaces the old one. The code is kept
-- only as an HMAC keyed with the server secret, and each check consumes one attempt.
create table if not exists auth.email_codes (
  user_id uuid not null references auth.users (id) on delete cascade,
  purpose text not null check (purpose in ('verify_email', 'reset_password')),
  code_hmac text not null,
  attempts integer not null default 0,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  primary key (user_id, purpose)
);

-- Admin listing pages by creation time.
create index if not exists users_created_at_idx on auth.users (created_at, id);

-- The auth tables are the server's own: the request roles never read them directly.
revoke all on all tables in schema auth from anon, authenticated;
