-- Sign-in with OpenID Connect providers and GitHub (src/auth/oauth/).

-- An account at a provider linked to a user: (provider, subject) is the provider's stable id.
create table if not exists auth.identities (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references auth.users (id) on delete cascade,
  provider text not null,
  subject text not null,
  email text,
  email_verified boolean not null default false,
  created_at timestamptz not null default now(),
  last_sign_in_at timestamptz not null default now(),
  unique (provider, subject)
);
create index if not exists identities_user_id_idx on auth.identities (user_id);

-- One sign-in in progress. `state_hash` is the SHA-256 of the state sent to the provider,
-- `browser_hash` the SHA-256 of the HttpOnly cookie that binds it to the browser that
-- started it. The callback spends the state (used_at) and records the provider's code with
-- the SHA-256 of Plinth's one-time code for the app; POST /api/auth/oauth/exchange spends
-- that (exchanged_at) once, with the app's PKCE verifier.
create table if not exists auth.oauth_flows (
  state_hash text primary key,
  provider text not null,
  redirect_uri text not null,
  callback_url text not null,
  code_challenge text not null,
  provider_verifier text not null,
  nonce text not null,
  browser_hash text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz,
  code_hash text unique,
  provider_code text,
  code_expires_at timestamptz,
  exchanged_at timestamptz
);
create index if not exists oauth_flows_expires_at_idx on auth.oauth_flows (expires_at);

revoke all on auth.identities, auth.oauth_flows from anon, authenticated;
