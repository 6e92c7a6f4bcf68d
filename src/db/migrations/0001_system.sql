-- Plinth system schema: persisted credentials (the admin key only as a hash).
create schema if not exists system;
revoke all on schema system from public;

create table if not exists system.credentials (
  name text primary key,
  value text not null,
  updated_at timestamptz not null default now()
);

-- The Postgres roles requests run as. Roles are cluster-wide on a server Postgres, so
-- another database may have created them already.
do $$
begin
  if not exists (select 1 from pg_roles where rolname = 'anon') then
    create role anon nologin noinherit;
  end if;
  if not exists (select 1 from pg_roles where rolname = 'authenticated') then
    create role authenticated nologin noinherit;
  end if;
  -- The connecting role must be able to SET ROLE to them.
  execute format('grant anon, authenticated to %I', current_user);
end
$$;

grant usage on schema public to anon, authenticated;
