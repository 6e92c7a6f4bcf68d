-- Email: editable templates of the auth emails (a missing row means the built-in text).
create schema if not exists email;
revoke all on schema email from public;

create table if not exists email.templates (
  key text primary key check (key in ('verification', 'reset-password', 'magic-link')),
  subject text not null check (length(subject) between 1 and 500),
  text text not null check (length(text) <= 100000),
  html text check (length(html) <= 500000),
  updated_at timestamptz not null default now()
);
