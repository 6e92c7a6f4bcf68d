-- Least privilege that holds (issue 40; docs/security.md). The owner role (admin SQL, table DDL,
-- migrations, schedule SQL, MCP run-raw-sql) may create types, casts, operators, functions,
-- defaults, policies and triggers in schema public. No code that runs with more rights than it
-- may ever evaluate one of them:
--   * realtime.channels is Plinth's again (the owner keeps writing its rows): a superuser's
--     definer function (realtime.channel_enabled) read a table whose column types the owner
--     could change, and so ran the owner's casts as a superuser;
--   * the triggers Plinth puts on the app's tables (realtime.notify_change, webhooks.capture*)
--     evaluate the app's rows (to_jsonb runs the casts of the owner's types), so they run as a
--     dedicated role, plinth_capture_<12 hex of md5(database)>: NOLOGIN, not a superuser, with
--     nothing but what they need (realtime.send, the outbox insert, the hooks' routing columns);
--   * the owner reads system.user_migrations but records a migration only through
--     system.record_user_migration(), which takes a proof keyed with a secret the owner cannot
--     read (the migrations service computes it), so a checksum cannot be forged;
--   * deleting a user cascades into the app's tables (foreign keys to auth.users): Plinth does
--     it on the owner's pool, never in a superuser's session (an app trigger fired there would
--     run as the superuser), so the owner may delete users;
--   * every SECURITY DEFINER function pins search_path with pg_temp last (else a temporary
--     table of the caller's session is found first);
--   * extensions off PostgreSQL's trusted list are created by a superuser: into schema
--     plinth_extensions, which is Plinth's, never into public, where the owner's functions and
--     operators would be found by the extension's script (the owner's search_path has it).
-- system.ensure_owner_role() (run at every start, src/db/owner.ts) keeps all of it true after a
-- restore into a new cluster. test/security/ checks the rules on the catalog.

create schema if not exists plinth_extensions;
revoke all on schema plinth_extensions from public;
grant usage on schema plinth_extensions to anon, authenticated;

-- Extensions beyond PostgreSQL's trusted ones: an admin calls
-- select system.create_extension('vector'); it creates only a name on this list, in schema
-- plinth_extensions (the owner role's search_path ends with it, so `vector(3)` needs no prefix).
create or replace function system.create_extension(name text) returns text
  language plpgsql security definer set search_path = pg_catalog, pg_temp
  as $$
begin
  if name is null or not name = any (array['vector', 'postgis', 'pg_trgm', 'pgcrypto', 'citext', 'hstore', 'uuid-ossp',
      'btree_gin', 'btree_gist', 'unaccent', 'fuzzystrmatch', 'intarray', 'ltree', 'cube', 'earthdistance', 'tablefunc', 'pg_stat_statements']) then
    raise exception 'extension "%" is not on the allow-list', name
      using errcode = '42501', hint = 'See docs/database.md "The owner role" for the list.';
  end if;
  execute format('create extension if not exists %I schema plinth_extensions', name);
  return name;
end
$$;
revoke all on function system.create_extension(text) from public;

-- The secret that keys the proof of a recorded app migration (never readable by the owner).
insert into system.credentials (name, value)
values ('user_migrations_key', encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text || clock_timestamp()::text, 'UTF8')), 'hex'))
on conflict (name) do nothing;

-- Records an app migration applied in the caller's transaction. `proof` is
-- sha256(key || sha256(key || version \n name \n checksum \n statements)) in hex, key being
-- system.credentials 'user_migrations_key' (src/database/migrations/service.ts computes it).
create or replace function system.record_user_migration(version text, name text, checksum text, statements integer, proof text)
  returns setof system.user_migrations
  language plpgsql security definer set search_path = pg_catalog, pg_temp
  as $$
declare
  k bytea := convert_to((select c.value from system.credentials c where c.name = 'user_migrations_key'), 'UTF8');
  message bytea := convert_to(version || E'\n' || name || E'\n' || checksum || E'\n' || statements::text, 'UTF8');
begin
  if proof is null or k is null or proof <> encode(sha256(k || sha256(k || message)), 'hex') then
    raise exception 'system.record_user_migration: not a migration applied by POST /api/database/migrations'
      using errcode = '42501', hint = 'Apply migrations with POST /api/database/migrations (or the db migrations CLI); the record cannot be written by hand.';
  end if;
  return query insert into system.user_migrations as m (version, name, checksum, statements)
    values (version, name, checksum, statements) returning m.*;
end
$$;
revoke all on function system.record_user_migration(text, text, text, integer, text) from public;

-- Definer functions: search_path pinned, pg_temp last (their bodies name every object fully).
alter function realtime.send(jsonb) set search_path = pg_catalog, pg_temp;
alter function realtime.publish(text, text, jsonb) set search_path = pg_catalog, pg_temp;
alter function realtime.channel_enabled(text) set search_path = pg_catalog, pg_temp;
alter function realtime.channel_presence(text) set search_path = pg_catalog, pg_temp;
alter function realtime.notify_change() set search_path = pg_catalog, pg_temp;
alter function realtime.session_ended() set search_path = pg_catalog, pg_temp;
alter function webhooks.capture() set search_path = pg_catalog, pg_temp;
alter function webhooks.capture_insert() set search_path = pg_catalog, pg_temp;
alter function webhooks.capture_delete() set search_path = pg_catalog, pg_temp;

create or replace function system.ensure_owner_role() returns text
  language plpgsql set search_path = pg_catalog, pg_temp
  as $$
declare
  owner text := 'plinth_owner_' || left(md5(current_database()), 12);
  capture text := 'plinth_capture_' || left(md5(current_database()), 12);
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
  begin
    if not exists (select 1 from pg_roles where rolname = capture) then
      execute format('create role %I nologin noinherit nosuperuser nocreatedb nocreaterole noreplication nobypassrls', capture);
    end if;
  exception when duplicate_object or unique_violation then
    null;
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
  -- Realtime's rules are policies on realtime.messages, the admin's to write (docs/realtime.md):
  -- the one object of Plinth's schemas the owner owns. Nothing of Plinth reads it with more
  -- rights than the caller (realtime.allowed() is SECURITY INVOKER, run on the owner's pool).
  if (select relowner from pg_class where oid = 'realtime.messages'::regclass) <> to_regrole(owner) then
    execute format('alter table realtime.messages owner to %I', owner);
  end if;
  -- Realtime's channels are rows the admin writes; the table is Plinth's (a definer reads it).
  if (select relowner from pg_class where oid = 'realtime.channels'::regclass) <> to_regrole(current_user) then
    execute format('alter table realtime.channels owner to %I', current_user);
  end if;
  execute format('grant select, insert, update, delete on realtime.channels to %I', owner);
  execute format('grant execute on function realtime.publish(text, text, jsonb) to %I', owner);
  -- What records and the admin's objects need from Plinth's schemas, and nothing more:
  -- auth.uid() and friends, the session check of withCaller, foreign keys to auth.users, the
  -- updated_at trigger function; deleting users (src/auth: on the owner's pool, so that the
  -- app's triggers on tables cascading from auth.users never run in a superuser's session).
  -- Credentials, refresh tokens and password hashes stay out of reach.
  execute format('grant usage on schema auth, system, realtime to %I', owner);
  execute format('grant select (id, user_id, revoked_at, expires_at) on auth.sessions to %I', owner);
  execute format('grant select (id, email, is_anonymous, created_at), references (id), delete on auth.users to %I', owner);
  -- App migrations: read freely, recorded only through the proof-checking function.
  execute format('revoke insert, update, delete, truncate on system.user_migrations from %I', owner);
  execute format('grant select on system.user_migrations to %I', owner);
  execute format('grant execute on function system.record_user_migration(text, text, text, integer, text) to %I', owner);
  -- Storage rows are the admin's to change in SQL too (docs/storage.md, the cache hears it).
  execute format('grant usage on schema storage to %I', owner);
  execute format('grant select, insert, update, delete, truncate on storage.buckets, storage.objects to %I', owner);
  execute format('grant execute on function system.create_extension(text) to %I', owner);
  execute format('grant usage on schema plinth_extensions to %I', owner);
  execute format('alter role %I in database %I set search_path = "$user", public, plinth_extensions', owner, current_database());
  -- The triggers on the app's tables run as the capture role (SECURITY DEFINER owned by it):
  -- the app's casts and functions they evaluate never run with more rights than these.
  execute format('grant usage on schema realtime, webhooks to %I', capture);
  execute format('grant execute on function realtime.send(jsonb) to %I', capture);
  execute format('grant select (id, columns, enabled, schema_name, table_name, events) on webhooks.hooks to %I', capture);
  execute format('grant insert on webhooks.outbox to %I', capture);
  for r in
    select p.oid::regprocedure::text as name from pg_proc p
    where p.oid in ('realtime.notify_change()'::regprocedure, 'webhooks.capture()'::regprocedure,
                    'webhooks.capture_insert()'::regprocedure, 'webhooks.capture_delete()'::regprocedure)
      and p.proowner <> to_regrole(capture)
  loop
    execute format('alter function %s owner to %I', r.name, capture);
  end loop;
  return owner;
end
$$;
revoke all on function system.ensure_owner_role() from public;

select system.ensure_owner_role();
