-- ID tokens already exchanged at POST /api/auth/id-token (src/auth/oauth/verify.ts): each
-- works once for its lifetime, on every instance. `token_hash` is the SHA-256 of the token's
-- issuer and decoded claims (not of its text, which a re-encoded signature would change);
-- rows go once `expires_at` (the token's exp plus the clock skew) has passed.
create table if not exists auth.oauth_spent_id_tokens (
  token_hash text primary key,
  expires_at timestamptz not null
);
create index if not exists oauth_spent_id_tokens_expires_idx on auth.oauth_spent_id_tokens (expires_at);
