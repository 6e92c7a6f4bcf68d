-- The advisor (docs/advisor.md): the findings of the last scan and the ones an admin chose
-- to silence. Written by Plinth's own connection, never by admin SQL.
create table if not exists system.advisor_issues (
  key text primary key,
  rule text not null,
  category text not null,
  severity text not null,
  object_type text not null,
  object_name text not null,
  title text not null,
  why text not null,
  fix_sql text,
  first_seen timestamptz not null default now(),
  last_seen timestamptz not null default now()
);
create table if not exists system.advisor_suppressions (
  key text primary key,
  reason text not null,
  created_at timestamptz not null default now()
);
revoke all on system.advisor_issues, system.advisor_suppressions from public;
