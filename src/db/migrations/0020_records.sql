-- Keeps updated_at current on every table created through the API.
create schema if not exists system;

create or replace function system.set_updated_at() returns trigger
  language plpgsql
  as $$
begin
  new.updated_at := now();
  return new;
end
$$;

