-- Storage metadata changes, announced on the NOTIFY channel plinth_storage so that an
-- instance's metadata cache (src/storage/cache.ts) drops what changed, whoever changed it
-- (a cascade, SQL run by hand, another instance). A payload names the row and its new version
-- (null once deleted); {"t":"all"} (a truncate, or a key too long to announce) drops it all.
-- The API's own object writes and bucket deletes set plinth.quiet_storage for their
-- statement: the instance that makes them applies them to its cache itself, and a NOTIFY
-- costs the server more than the write (a signal and a wake-up per listener).
create or replace function storage.notify_change() returns trigger
  language plpgsql set search_path = pg_catalog
  as $$
declare
  body text;
begin
  if current_setting('plinth.quiet_storage', true) = 'on' then
    return null;
  end if;
  if tg_level = 'STATEMENT' then
    perform pg_notify('plinth_storage', '{"t":"all"}');
    return null;
  end if;
  if tg_table_name = 'buckets' then
    body := json_build_object('t', 'b', 'b', coalesce(new.name, old.name),
      'v', case when tg_op = 'DELETE' then null when new.is_public then 'public' else 'private' end)::text;
  else
    body := json_build_object('t', 'o', 'b', coalesce(new.bucket, old.bucket), 'k', coalesce(new.key, old.key),
      'v', case when tg_op = 'DELETE' then null
        else concat_ws('|', coalesce(new.etag, ''), new.size, new.mime_type, coalesce(new.uploaded_by::text, ''),
          floor(extract(epoch from new.uploaded_at) * 1000)::bigint) end)::text;
  end if;
  perform pg_notify('plinth_storage', case when octet_length(body) <= 7900 then body else '{"t":"all"}' end);
  return null;
end
$$;
revoke all on function storage.notify_change() from public;

drop trigger if exists notify_change on storage.buckets;
create trigger notify_change after insert or update or delete on storage.buckets
  for each row execute function storage.notify_change();
drop trigger if exists notify_change on storage.objects;
create trigger notify_change after insert or update or delete on storage.objects
  for each row execute function storage.notify_change();
drop trigger if exists notify_truncate on storage.buckets;
create trigger notify_truncate after truncate on storage.buckets
  for each statement execute function storage.notify_change();
drop trigger if exists notify_truncate on storage.objects;
create trigger notify_truncate after truncate on storage.objects
  for each statement execute function storage.notify_change();
