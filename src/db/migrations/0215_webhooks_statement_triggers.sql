-- Database webhooks, cheaper capture: INSERT and DELETE are caught by statement-level
-- triggers with transition tables, which write the outbox rows of the whole statement in one
-- set-based insert (one trigger call per statement instead of one per row; no per-row hook
-- lookup or plpgsql loop). UPDATE stays row-level (webhooks.capture, migration 0151): it
-- needs each row's old and new values side by side for the column filter, which transition
-- tables do not pair. Same transaction, same payload per row: {type, table, schema, record,
-- old_record}.
create or replace function webhooks.capture_insert() returns trigger
language plpgsql security definer set search_path = pg_catalog as $$
begin
  insert into webhooks.outbox (hook_id, payload)
  select h.id, jsonb_build_object('type', 'INSERT', 'table', tg_table_name, 'schema', tg_table_schema, 'record', to_jsonb(r), 'old_record', null)
    from webhooks.hooks h cross join plinth_new r
   where h.enabled and h.schema_name = tg_table_schema and h.table_name = tg_table_name and 'INSERT' = any(h.events);
  return null;
end $$;

create or replace function webhooks.capture_delete() returns trigger
language plpgsql security definer set search_path = pg_catalog as $$
begin
  insert into webhooks.outbox (hook_id, payload)
  select h.id, jsonb_build_object('type', 'DELETE', 'table', tg_table_name, 'schema', tg_table_schema, 'record', null, 'old_record', to_jsonb(r))
    from webhooks.hooks h cross join plinth_old r
   where h.enabled and h.schema_name = tg_table_schema and h.table_name = tg_table_name and 'DELETE' = any(h.events);
  return null;
end $$;

-- Tables hooked before this migration: their one row-level trigger becomes the three.
do $$
declare t record;
begin
  for t in select n.nspname, c.relname from pg_trigger g join pg_class c on c.oid = g.tgrelid join pg_namespace n on n.oid = c.relnamespace
            where g.tgname = 'plinth_webhooks' loop
    execute format('drop trigger plinth_webhooks on %I.%I', t.nspname, t.relname);
    execute format('create trigger plinth_webhooks after update on %I.%I for each row execute function webhooks.capture()', t.nspname, t.relname);
    execute format('create trigger plinth_webhooks_insert after insert on %I.%I referencing new table as plinth_new for each statement execute function webhooks.capture_insert()', t.nspname, t.relname);
    execute format('create trigger plinth_webhooks_delete after delete on %I.%I referencing old table as plinth_old for each statement execute function webhooks.capture_delete()', t.nspname, t.relname);
  end loop;
end $$;
