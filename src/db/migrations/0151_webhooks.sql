-- Database webhooks: hooks on a table's changes, the durable outbox their trigger writes in
-- the changing transaction, and the delivery log.
create schema if not exists webhooks;
revoke all on schema webhooks from public;

create table if not exists webhooks.hooks (
  id uuid primary key default gen_random_uuid(),
  name text not null check (length(name) between 1 and 200),
  schema_name text not null default 'public',
  table_name text not null,
  events text[] not null check (events <@ array['INSERT', 'UPDATE', 'DELETE'] and cardinality(events) > 0),
  -- UPDATE fires only when one of these columns changed; null: any change.
  columns text[],
  url text,
  function_slug text,
  secret text not null,
  enabled boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check (num_nonnulls(url, function_slug) = 1)
);
create index if not exists hooks_table on webhooks.hooks (schema_name, table_name) where enabled;

create table if not exists webhooks.outbox (
  id bigint generated always as identity primary key,
  hook_id uuid not null,
  payload jsonb not null,
  created_at timestamptz not null default now()
);

create table if not exists webhooks.deliveries (
  id uuid primary key default gen_random_uuid(),
  hook_id uuid not null references webhooks.hooks (id) on delete cascade,
  event text not null,
  payload jsonb not null,
  status text not null default 'pending' check (status in ('pending', 'succeeded', 'failed')),
  attempts int not null default 0,
  response_status int,
  response_body text,
  error text,
  redelivery_of uuid,
  created_at timestamptz not null default now(),
  committed_at timestamptz,
  delivered_at timestamptz
);
create index if not exists deliveries_hook on webhooks.deliveries (hook_id, created_at desc);
create index if not exists deliveries_age on webhooks.deliveries (created_at);

-- The trigger of every hooked table: one outbox row per matching enabled hook, in the same
-- transaction as the change (committed with it, or not at all). Security definer: the change
-- may come from a user's RLS transaction, which cannot write the webhooks schema itself.
create or replace function webhooks.capture() returns trigger
language plpgsql security definer set search_path = pg_catalog as $$
declare
  h record;
  rec jsonb := case when tg_op <> 'DELETE' then to_jsonb(new) end;
  old_rec jsonb := case when tg_op <> 'INSERT' then to_jsonb(old) end;
begin
  for h in select id, columns from webhooks.hooks
            where enabled and schema_name = tg_table_schema and table_name = tg_table_name and tg_op = any(events) loop
    if tg_op = 'UPDATE' and h.columns is not null
       and not exists (select 1 from unnest(h.columns) c where rec -> c is distinct from old_rec -> c) then
      continue;
    end if;
    insert into webhooks.outbox (hook_id, payload)
    values (h.id, jsonb_build_object('type', tg_op, 'table', tg_table_name, 'schema', tg_table_schema, 'record', rec, 'old_record', old_rec));
  end loop;
  -- No NOTIFY here: it would serialise every committing writer on the notify queue's lock;
  -- the relays poll the outbox instead (WEBHOOK_POLL_MS).
  return null;
end $$;
