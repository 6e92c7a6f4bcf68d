-- Realtime: channels, their authorization rules, database change notifications, and the
-- session-end signal that disconnects sockets. Everything reaches the API instances through
-- one NOTIFY channel, plinth_realtime (docs/realtime.md).
create schema if not exists realtime;
grant usage on schema realtime to anon, authenticated;

-- Which broadcast channels exist: a channel name is usable when it matches (LIKE) the
-- pattern of an enabled row, e.g. 'chat:%'. Channels table:<t> are governed by the table.
create table if not exists realtime.channels (
  id uuid primary key default gen_random_uuid(),
  pattern text not null unique check (length(pattern) between 1 and 255),
  description text,
  enabled boolean not null default true,
  created_at timestamptz not null default now()
);

-- The shape admins write authorization policies on. It holds no rows: a subscription is the
-- row image (channel, event null, sender) checked against its SELECT policies, a publish the
-- image (channel, event, payload, sender) checked against its INSERT policies, as the caller.
-- No policy, no access (default deny for users and anon alike); admins bypass the rules.
create table if not exists realtime.messages (
  id uuid primary key default gen_random_uuid(),
  channel text not null,
  event text,
  payload jsonb,
  sender_type text not null default 'user',
  sender_id uuid,
  created_at timestamptz not null default now()
);
alter table realtime.messages enable row level security;
grant select, insert on realtime.messages to anon, authenticated;

-- Changes whose notification would pass the 8000-byte NOTIFY limit: the notification carries
-- the id of this row instead. Rows older than five minutes are removed by the next one.
create table if not exists realtime.overflow (
  id bigserial primary key,
  body jsonb not null,
  created_at timestamptz not null default now()
);
revoke all on realtime.overflow from public;

create or replace function realtime.send(body jsonb) returns void
  language plpgsql security definer set search_path = pg_catalog, realtime
  as $$
declare
  text_body text := body::text;
  ref bigint;
begin
  if octet_length(text_body) <= 7900 then
    perform pg_notify('plinth_realtime', text_body);
    return;
  end if;
  delete from realtime.overflow where created_at < now() - interval '5 minutes';
  insert into realtime.overflow (body) values (body) returning id into ref;
  perform pg_notify('plinth_realtime', json_build_object('k', 'ref', 'id', ref)::text);
end
$$;
revoke all on function realtime.send(jsonb) from public;

-- Publishes a message on a channel as the system (senderType "system"), delivered when the
-- transaction commits. Callable by the owner role: from triggers and RPC functions declared
-- SECURITY DEFINER, or through the admin SQL endpoint.
create or replace function realtime.publish(channel text, event text, payload jsonb default '{}'::jsonb) returns void
  language plpgsql security definer set search_path = pg_catalog, realtime
  as $$
begin
  if channel is null or length(channel) not between 1 and 255 then
    raise exception 'realtime.publish: the channel must be 1 to 255 characters' using errcode = '22023';
  end if;
  if event is null or length(event) not between 1 and 255 then
    raise exception 'realtime.publish: the event must be 1 to 255 characters' using errcode = '22023';
  end if;
  if payload is not null and jsonb_typeof(payload) <> 'object' then
    raise exception 'realtime.publish: the payload must be a JSON object' using errcode = '22023';
  end if;
  perform realtime.send(jsonb_build_object('k', 'msg', 'channel', channel, 'event', event,
    'payload', coalesce(payload, '{}'::jsonb), 'id', gen_random_uuid(), 'at', now()));
end
$$;
revoke all on function realtime.publish(text, text, jsonb) from public;

-- Whether the current role and claims may run `cmd` ('select' or 'insert') on the row image
-- `image` of `tbl`: the table privilege, then, under RLS, the table's policies for that
-- command and role (permissive ones OR-ed, restrictive ones AND-ed), evaluated on the image
-- as the caller. One answer per entry of `claims`, each checked with those JWT claims (all
-- under the transaction's role); one answer with the transaction's claims when it is null.
create or replace function realtime.allowed(tbl regclass, cmd text, image jsonb, claims text[] default null)
  returns boolean[]
  language plpgsql volatile
  as $$
declare
  rls boolean;
  rel text;
  permissive text;
  restrictive text;
  cond text;
  q text;
  ok boolean;
  n int := coalesce(array_length(claims, 1), 1);
  answer boolean[] := '{}';
  i int;
begin
  if tbl is null or image is null or not coalesce(has_table_privilege(tbl, cmd), false) then
    return array_fill(false, array[n]);
  end if;
  select c.relrowsecurity, c.relname into rls, rel from pg_class c where c.oid = tbl;
  if rls then
    select string_agg('(' || e || ')', ' or ') filter (where p.polpermissive),
           string_agg('(' || e || ')', ' and ') filter (where not p.polpermissive)
      into permissive, restrictive
      from pg_policy p,
        lateral (select coalesce(pg_get_expr(case when cmd = 'insert' then coalesce(p.polwithcheck, p.polqual) else p.polqual end, p.polrelid), 'false') as e) x
     where p.polrelid = tbl
       and p.polcmd in (case when cmd = 'insert' then 'a' else 'r' end, '*')
       and exists (select 1 from unnest(p.polroles) r where r = 0 or pg_has_role(current_user, r, 'member'));
    cond := coalesce('(' || permissive || ')', 'false') || coalesce(' and ' || restrictive, '');
  else
    cond := 'true';
  end if;
  q := format('select exists (select 1 from jsonb_populate_record(null::%s, $1) as %I where %s)', tbl, rel, cond);
  for i in 1 .. n loop
    if claims is not null then
      perform set_config('request.jwt.claims', claims[i], true);
    end if;
    execute q into ok using image;
    answer := answer || coalesce(ok, false);
  end loop;
  return answer;
end
$$;
grant execute on function realtime.allowed(regclass, text, jsonb, text[]) to anon, authenticated;

-- Whether a broadcast channel name matches an enabled pattern.
create or replace function realtime.channel_enabled(name text) returns boolean
  language sql stable security definer set search_path = pg_catalog, realtime
  as $$ select exists (select 1 from realtime.channels c where c.enabled and name like c.pattern) $$;
grant execute on function realtime.channel_enabled(text) to anon, authenticated;

-- The trigger behind POST /api/database/tables/{t}/realtime: one notification per changed row.
create or replace function realtime.notify_change() returns trigger
  language plpgsql security definer set search_path = pg_catalog, realtime
  as $$
begin
  -- tg_argv[0]: the primary key column (channels table:<t>:<key>), or none.
  perform realtime.send(jsonb_build_object('k', 'change', 'table', tg_table_name, 'op', tg_op, 'pk', tg_argv[0],
    'new', case when tg_op <> 'DELETE' then to_jsonb(new) end,
    'old', case when tg_op <> 'INSERT' then to_jsonb(old) end,
    'id', gen_random_uuid(), 'at', now()));
  return null;
end
$$;

-- A session signed out, expired by revocation, or deleted with its user: its sockets close.
create or replace function realtime.session_ended() returns trigger
  language plpgsql security definer set search_path = pg_catalog, realtime
  as $$
begin
  if tg_op = 'DELETE' or (old.revoked_at is null and new.revoked_at is not null) then
    perform pg_notify('plinth_realtime', json_build_object('k', 'session', 'sid', old.id)::text);
  end if;
  return null;
end
$$;
drop trigger if exists plinth_realtime_session on auth.sessions;
create trigger plinth_realtime_session after update of revoked_at or delete on auth.sessions
  for each row execute function realtime.session_ended();
