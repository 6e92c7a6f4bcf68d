-- A function's imports are resolved and bundled at deploy (issue #34): the bundle is what the
-- runtime loads (null: a self-contained function, compiled from code as before), and the
-- dependencies it was resolved with ([{specifier, resolved}]). Stored with the code in one
-- row, so a restart loads it without the network and a deploy replaces all three at once.
alter table functions.functions add column if not exists bundle text;
alter table functions.functions add column if not exists dependencies jsonb not null default '[]'::jsonb;
