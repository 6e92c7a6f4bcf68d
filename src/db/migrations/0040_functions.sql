-- Functions: their code, the secrets they read as env vars, and their console output.
create schema if not exists functions;
revoke all on schema functions from public;

create table if not exists functions.functions (
  id uuid primary key default gen_random_uuid(),
  slug text not null unique check (slug ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
  name text not null,
  description text not null default '',
  code text not null,
  status text not null default 'active' check (status in ('draft', 'active', 'error')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  deployed_at timestamptz
);

-- Project-wide secrets, readable by every function through Deno.env.get(name).
create table if not exists functions.secrets (
  name text primary key check (name ~ '^[A-Za-z_][A-Za-z0-9_]{0,127}$'),
  value text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- The last lines of each function's console output (trimmed by the server).
create table if not exists functions.logs (
  id bigint generated always as identity primary key,
  function_id uuid not null references functions.functions (id) on delete cascade,
  level text not null,
  message text not null,
  created_at timestamptz not null default now()
);
create index if not exists logs_function_id_idx on functions.logs (function_id, id);
