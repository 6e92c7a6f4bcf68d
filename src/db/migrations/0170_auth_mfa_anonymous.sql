-- Auth breadth: TOTP factors and recovery codes, sign-in challenges, assurance levels on
-- sessions, anonymous users and magic links (docs/auth.md).

-- Anonymous users have no email (a NULL never collides with the unique index) and no
-- password; converting one fills both in and keeps its id.
alter table auth.users alter column email drop not null;
alter table auth.users add column if not exists is_anonymous boolean not null default false;
create index if not exists users_anonymous_created_idx on auth.users (created_at) where is_anonymous;

-- The assurance level of a session and the methods that proved it ([{method, timestamp}],
-- Supabase's `amr`); a refresh keeps both.
alter table auth.sessions add column if not exists aal text not null default 'aal1';
alter table auth.sessions add column if not exists amr jsonb not null default '[]'::jsonb;

-- A TOTP factor. The secret is needed to check codes, so it is kept encrypted (AES-256-GCM
-- under a key derived from the server secret), never hashed. `last_step` is the time step
-- of the last accepted code: a code is accepted only for a later step, so it works once.
create table if not exists auth.mfa_factors (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references auth.users (id) on delete cascade,
  type text not null default 'totp' check (type in ('totp')),
  friendly_name text,
  secret_enc text not null,
  status text not null default 'unverified' check (status in ('unverified', 'verified')),
  last_step bigint not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index if not exists mfa_factors_user_id_idx on auth.mfa_factors (user_id);

-- Recovery codes: HMAC-SHA256 keyed with the server secret; single use.
create table if not exists auth.mfa_recovery_codes (
  user_id uuid not null references auth.users (id) on delete cascade,
  code_hmac text not null,
  created_at timestamptz not null default now(),
  used_at timestamptz,
  primary key (user_id, code_hmac)
);

-- A password (or code) sign-in of a user with a verified factor: the short-lived token the
-- second step spends. Stored as SHA-256; a few tries, then it is dead.
create table if not exists auth.mfa_challenges (
  token_hash text primary key,
  user_id uuid not null references auth.users (id) on delete cascade,
  amr jsonb not null,
  attempts integer not null default 0,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
create index if not exists mfa_challenges_user_id_idx on auth.mfa_challenges (user_id);

-- Magic links are one more purpose of the one-time codes table.
alter table auth.email_codes drop constraint if exists email_codes_purpose_check;
alter table auth.email_codes add constraint email_codes_purpose_check
  check (purpose in ('verify_email', 'reset_password', 'sign_in', 'reset_token', 'magic_link'));

revoke all on all tables in schema auth from anon, authenticated;
