-- Schedules: cron-driven runs of a function, an HTTP request or a SQL statement, and their history.
create schema if not exists schedules;
revoke all on schema schedules from public;

create table if not exists schedules.schedules (
  id uuid primary key default gen_random_uuid(),
  name text not null check (length(name) between 1 and 200),
  cron text not null,
  timezone text not null default 'UTC',
  enabled boolean not null default true,
  -- The target: exactly one of an HTTP URL, a function slug or a SQL statement.
  function_url text,
  http_method text not null default 'POST',
  headers jsonb not null default '{}',
  body jsonb,
  function_slug text,
  sql text,
  timeout_seconds int not null default 30 check (timeout_seconds between 1 and 3600),
  retries int not null default 0 check (retries between 0 and 10),
  catch_up text not null default 'one' check (catch_up in ('one', 'none')),
  -- The next due time no instance has claimed yet; null while disabled.
  next_due_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check (num_nonnulls(function_url, function_slug, sql) = 1)
);
create index if not exists schedules_due on schedules.schedules (next_due_at) where enabled;

create table if not exists schedules.runs (
  id uuid primary key default gen_random_uuid(),
  schedule_id uuid not null references schedules.schedules (id) on delete cascade,
  due_at timestamptz not null,
  trigger text not null check (trigger in ('schedule', 'catch-up', 'manual')),
  status text not null check (status in ('queued', 'running', 'succeeded', 'failed', 'skipped')),
  attempts int not null default 0,
  instance text,
  started_at timestamptz,
  finished_at timestamptz,
  duration_ms int,
  output text,
  error text,
  created_at timestamptz not null default now()
);
-- The claim: one run per schedule and due time, whichever instance saw the tick first.
create unique index if not exists runs_once on schedules.runs (schedule_id, due_at) where trigger <> 'manual';
create index if not exists runs_history on schedules.runs (schedule_id, created_at desc);
create index if not exists runs_age on schedules.runs (created_at);
