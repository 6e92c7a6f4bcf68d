-- Presence is opt-in per channel pattern (issue 25): a broadcast channel shows who else is
-- subscribed only when an enabled pattern it matches has presence on; table channels never do.
-- Even then a viewer sees a member only when the viewer's SELECT policies on realtime.messages
-- pass the member's presence image (channel, event 'presence', the member as sender).
alter table realtime.channels add column if not exists presence boolean not null default false;

create or replace function realtime.channel_presence(name text) returns boolean
  language sql stable security definer set search_path = pg_catalog, realtime
  as $$ select exists (select 1 from realtime.channels c where c.enabled and c.presence and name like c.pattern) $$;
grant execute on function realtime.channel_presence(text) to anon, authenticated;
