-- The authenticator (issue #38; docs/database.md "The authenticator"): the login the
-- transactions of users and the anon key run on, PostgREST's design. It holds no privilege of
-- its own and inherits none (NOINHERIT): logged in, it can do what PUBLIC can and nothing
-- more, so less than anon. Each transaction makes it its caller with SET LOCAL ROLE (it is a
-- member of anon and authenticated, of nothing else: not of the owner role, so no SQL run as
-- a caller can become the owner through it). So the `begin`, the caller's setup, the statement
-- and the `commit` may leave in one write: were the `begin` refused, the setup's SET LOCAL
-- would end with its own statement and the statement behind it would run as the authenticator,
-- which can read and write nothing (src/db/postgres.ts, src/database/caller.ts).
-- Per database, named like the owner role: plinth_authenticator_ + 12 hex of md5(database).
-- Its password is set from the code (system.credentials, src/db/authenticator.ts), never here.
-- Run at every start by a superuser (src/db/owner.ts), so a restore into a new cluster gets
-- it back; a Plinth user that is not a superuser has no authenticator (returns null).
create or replace function system.ensure_authenticator_role() returns text
  language plpgsql set search_path = pg_catalog, pg_temp
  as $$
declare
  me text := 'plinth_authenticator_' || left(md5(current_database()), 12);
  r record;
begin
  if not (select rolsuper from pg_roles where rolname = current_user) then
    return null;
  end if;
  begin
    if not exists (select 1 from pg_roles where rolname = me) then
      execute format('create role %I login noinherit nosuperuser nocreatedb nocreaterole noreplication nobypassrls', me);
    end if;
  exception when duplicate_object or unique_violation then
    null; -- another instance created it at the same moment
  end;
  -- Attributes put back if someone changed them (a restore, a hand-made role of the same name).
  execute format('alter role %I login noinherit nosuperuser nocreatedb nocreaterole noreplication nobypassrls', me);
  -- Membership of the callers' roles only. Any other membership is taken away: through one it
  -- could SET ROLE (also in SQL a caller runs) to a role with more rights.
  for r in
    select g.rolname from pg_auth_members m join pg_roles g on g.oid = m.roleid
    where m.member = to_regrole(me) and g.rolname not in ('anon', 'authenticated')
  loop
    execute format('revoke %I from %I', r.rolname, me);
  end loop;
  execute format('grant anon, authenticated to %I', me);
  execute format('grant connect on database %I to %I', current_database(), me);
  -- Before a transaction's setup runs (and if its `begin` were refused): names resolve in
  -- Postgres's catalog only, and nothing runs longer than a caller's statement may.
  execute format('alter role %I in database %I set search_path = pg_catalog, pg_temp', me, current_database());
  execute format('alter role %I in database %I set statement_timeout = %L', me, current_database(), '30s');
  return me;
end
$$;
revoke all on function system.ensure_authenticator_role() from public;

-- The check of a user's session in the caller's setup (src/database/caller.ts). It ran in the
-- setup's own statement, whose privileges are checked before its role changes: as the login,
-- which now may read nothing. It runs right behind it, as `authenticated`, through this
-- function (Plinth's, pinned search_path; it evaluates nothing the owner can define).
create or replace function auth.session_live(sid uuid, uid uuid) returns boolean
  language sql stable security definer set search_path = pg_catalog, pg_temp
  as $$ select exists (select 1 from auth.sessions s where s.id = sid and s.user_id = uid and s.revoked_at is null and s.expires_at > now()) $$;
revoke all on function auth.session_live(uuid, uuid) from public;
grant execute on function auth.session_live(uuid, uuid) to authenticated;
