-- AI gateway: one row per call to /api/ai/*, for usage reports and the daily token budget.
create schema if not exists ai;
revoke all on schema ai from public;

create table if not exists ai.usage (
  id bigint generated always as identity primary key,
  created_at timestamptz not null default now(),
  -- null for admin and anon callers; kept (set null) when the user is deleted so totals stay right
  user_id uuid references auth.users (id) on delete set null,
  caller text not null check (caller in ('user', 'admin', 'anon')),
  endpoint text not null check (endpoint in ('chat', 'images')),
  model text not null,
  stream boolean not null default false,
  prompt_tokens integer not null default 0,
  completion_tokens integer not null default 0,
  total_tokens integer not null default 0,
  images integer not null default 0,
  -- true when the upstream sent no usage and Plinth estimated the tokens (~4 characters a token)
  estimated boolean not null default false,
  latency_ms integer not null,
  -- the HTTP status Plinth answered (499: the client went away first)
  status integer not null,
  error text
);
create index if not exists usage_user_created_idx on ai.usage (user_id, created_at);
create index if not exists usage_created_idx on ai.usage (created_at);
