-- Least privilege (docs/database.md "The owner role"): the admin API's SQL, table DDL and
-- records run on a login role that owns the app's schema but is not a superuser, so that
-- COPY ... PROGRAM, server file access, ALTER SYSTEM and roles are out of its reach. Roles are
-- cluster-wide and a server may hold many Plinth databases, so the role is per database:
-- plinth_owner_ + the first 12 hex digits of md5(database name) (src/db/owner.ts names it
-- the same way). Its password is set from the code (system.credentials), never here.
-- system.ensure_owner_role() is idempotent and runs again at every start (src/db/owner.ts):
-- a database carried over or restored into a new cluster gets its role back, and objects
-- that the superuser made in public since then move to the owner.

-- The app's own migrations (POST /api/database/migrations), kept apart from Plinth's
-- system.migrations: applied as the owner role, which records them in the same transaction.
create table if not exists system.user_migrations (
  version text primary key,
  name text not null,
  checksum text not null,
  statements integer not null,
  applied_at timestamptz not null default now()
);
revoke all on system.user_migrations from public;

-- Extensions beyond PostgreSQL's trusted ones: an admin calls
-- select system.create_extension('vector'); it creates only a name on this list.
create or replace function system.create_extension(name text) returns text
  language plpgsql security definer set search_path = pg_catalog
  as $$
begin
  if name is null or not name = any (array['vector', 'postgis', 'pg_trgm', 'pgcrypto', 'citext', 'hstore', 'uuid-ossp',
      'btree_gin', 'btree_gist', 'unaccent', 'fuzzystrmatch', 'intarray', 'ltree', 'cube', 'earthdistance', 'tablefunc', 'pg_stat_statements']) then
    raise exception 'extension "%" is not on the allow-list', name
      using errcode = '42501', hint = 'See docs/database.md "The owner role" for the list.';
  end if;
  execute format('create extension if not exists %I schema public', name);
  return name;
end
$$;
revoke all on function system.create_extension(text) from public;

create or replace function system.ensure_owner_role() returns text
  language plpgsql set search_path = pg_catalog
  as $$
declare
  owner text := 'plinth_owner_' || left(md5(current_database()), 12);
  r record;
begin
  -- A managed Postgres whose user is not a superuser: that user already is the owner.
  if not (select rolsuper from pg_roles where rolname = current_user) then
    return current_user;
  end if;
  begin
    if not exists (select 1 from pg_roles where rolname = owner) then
      execute format('create role %I login nosuperuser nocreatedb nocreaterole noreplication nobypassrls', owner);
    end if;
  exception when duplicate_object or unique_violation then
    null; -- another instance created it at the same moment
  end;
  execute format('grant anon, authenticated to %I', owner);
  -- CREATE on the database: schemas and PostgreSQL's trusted extensions (pgcrypto, citext, ...).
  execute format('grant connect, create, temporary on database %I to %I', current_database(), owner);
  if (select nspowner from pg_namespace where nspname = 'public') <> to_regrole(owner) then
    execute format('alter schema public owner to %I', owner);
  end if;
  -- An upgrade: what the superuser created in public moves to the owner, data and policies stay.
  for r in
    select c.oid::regclass::text as name, c.relkind from pg_class c
    where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p', 'v', 'm', 'f', 'S') and c.relowner <> to_regrole(owner)
      and not (c.relkind = 'S' and exists (select 1 from pg_depend d where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype in ('a', 'i')))
      and not exists (select 1 from pg_depend d where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype = 'e')
  loop
    execute format('alter %s %s owner to %I',
      case r.relkind when 'v' then 'view' when 'm' then 'materialized view' when 'f' then 'foreign table' when 'S' then 'sequence' else 'table' end,
      r.name, owner);
  end loop;
  for r in
    select p.oid::regprocedure::text as name, p.prokind from pg_proc p
    where p.pronamespace = 'public'::regnamespace and p.proowner <> to_regrole(owner)
      and not exists (select 1 from pg_depend d where d.classid = 'pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')
  loop
    execute format('alter %s %s owner to %I', case r.prokind when 'p' then 'procedure' when 'a' then 'aggregate' else 'function' end, r.name, owner);
  end loop;
  for r in
    select t.oid::regtype::text as name from pg_type t
    where t.typnamespace = 'public'::regnamespace and t.typtype in ('e', 'd', 'c') and t.typowner <> to_regrole(owner)
      and not (t.typtype = 'c' and exists (select 1 from pg_class c where c.oid = t.typrelid and c.relkind <> 'c'))
      and not exists (select 1 from pg_depend d where d.classid = 'pg_type'::regclass and d.objid = t.oid and d.deptype = 'e')
  loop
    execute format('alter type %s owner to %I', r.name, owner);
  end loop;
  -- Realtime's channels are rows of realtime.channels and its rules policies on
  -- realtime.messages, both written by the admin in SQL (docs/realtime.md).
  if (select relowner from pg_class where oid = 'realtime.messages'::regclass) <> to_regrole(owner) then
    execute format('alter table realtime.messages owner to %I', owner);
  end if;
  if (select relowner from pg_class where oid = 'realtime.channels'::regclass) <> to_regrole(owner) then
    execute format('alter table realtime.channels owner to %I', owner);
  end if;
  execute format('grant execute on function realtime.publish(text, text, jsonb) to %I', owner);
  -- What records and the admin's objects need from Plinth's schemas, and nothing more:
  -- auth.uid() and friends, the session check of withCaller, foreign keys to auth.users, the
  -- updated_at trigger function. Credentials, refresh tokens and password hashes stay out of reach.
  execute format('grant usage on schema auth, system, realtime to %I', owner);
  execute format('grant select (id, user_id, revoked_at, expires_at) on auth.sessions to %I', owner);
  execute format('grant select (id, email), references (id) on auth.users to %I', owner);
  execute format('grant select, insert on system.user_migrations to %I', owner);
  -- Storage rows are the admin's to change in SQL too (docs/storage.md, the cache hears it).
  execute format('grant usage on schema storage to %I', owner);
  execute format('grant select, insert, update, delete, truncate on storage.buckets, storage.objects to %I', owner);
  execute format('grant execute on function system.create_extension(text) to %I', owner);
  return owner;
end
$$;
revoke all on function system.ensure_owner_role() from public;

select system.ensure_owner_role();
